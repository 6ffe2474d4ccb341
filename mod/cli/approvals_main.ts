/** The CLI role's side of `gurt approvals`, `gurt approve` and `gurt refuse` (seed 002 §9). */
import type { PendingApproval } from "../broker/mod.ts";
import { admin } from "./admin_client.ts";
import { answerText, approvalBlock } from "../owner-text/mod.ts";

/** What the owner asked. */
export type ApprovalsArgs =
  | { socket: string; action: "list" }
  | { socket: string; action: "approve"; id: number }
  | { socket: string; action: "refuse"; id: number; reason: string | null };

/** Prints the answer; exit status 0, or 1 for a denial or an approval no longer pending. */
export default async function main(args: ApprovalsArgs): Promise<number> {
  if (args.action === "list") {
    const { body } = await admin(args.socket, { method: "GET", path: "/approvals" });
    const items = body.items as PendingApproval[];
    if (items.length === 0) console.log("no approvals pending");
    for (const item of items) console.log(approvalBlock(item, new Date()));
    return 0;
  }
  const path = `/approvals/${args.id}/${args.action}`;
  const body = args.action === "refuse" && args.reason !== null
    ? { reason: args.reason }
    : undefined;
  const answer = await admin(args.socket, { method: "POST", path, body });
  const shown = answerText(args.id, args.action, answer);
  if (shown.error) console.error(shown.text);
  else console.log(shown.text);
  return shown.ok ? 0 : 1;
}

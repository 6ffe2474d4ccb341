/** The CLI role's side of `gurt approvals`, `gurt approve` and `gurt refuse`. */
import { AdminClient } from "../admin/mod.ts";
import { answerText, approvalBlock } from "../owner-text/mod.ts";
import { printOwner } from "./owner_print.ts";

/** What the owner asked. */
export type ApprovalsArgs =
  | { socket: string; action: "list" }
  | { socket: string; action: "approve"; id: number }
  | { socket: string; action: "refuse"; id: number; reason: string | null };

/** Prints the answer; exit status 0, or 1 for a denial or an approval no longer pending. */
export default async function main(args: ApprovalsArgs): Promise<number> {
  const admin = new AdminClient(args.socket);
  if (args.action === "list") {
    const answer = await admin.approvals();
    if (!answer.ok) {
      console.error(`gurt approvals: ${answer.error}`);
      return 1;
    }
    const items = answer.value.items;
    if (items.length === 0) printOwner("no approvals pending");
    for (const item of items) printOwner(approvalBlock(item, new Date()));
    return 0;
  }
  const answer = args.action === "approve"
    ? await admin.approve(args.id)
    : await admin.refuse(args.id, { reason: args.reason ?? undefined });
  const shown = answerText(answer, { id: args.id, action: args.action });
  if (shown.error) console.error(shown.text);
  else printOwner(shown.text);
  return shown.ok ? 0 : 1;
}

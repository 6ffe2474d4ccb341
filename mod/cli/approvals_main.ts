/** The CLI role's side of `gurt approvals`, `gurt approve` and `gurt refuse` (seed 002 §9). */
import type { PendingApproval } from "../broker/mod.ts";
import { admin, errorOf } from "./admin_client.ts";
import { approvalBlock } from "./approvals_format.ts";

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
  if (answer.body.code === "no_such_approval") {
    console.log(`${args.id}: no such approval (already answered or expired)`);
    return 1;
  }
  if (answer.status !== 200) {
    console.error(`${args.id}: ${errorOf(answer.body)}`);
    return 1;
  }
  if (args.action === "refuse") {
    console.log(`refused ${args.id}`);
    return 0;
  }
  const outcome = answer.body.outcome as { outcome: string; reason?: string };
  if (outcome.outcome === "denied") {
    console.log(`approved ${args.id}: denied (${outcome.reason})`);
    return 1;
  }
  console.log(`approved ${args.id}: runs`);
  return 0;
}

/** The CLI role's side of `gurt approvals`, `gurt approve` and `gurt refuse`. */
import { AdminClient, type PendingApprovalView } from "../admin/mod.ts";
import { answerText, approvalBlock, shownText } from "../owner-text/mod.ts";
import { printOwner } from "./owner_print.ts";

/** What the owner asked: `task` lists only that task's approvals, every one of them. */
export type ApprovalsArgs =
  | { socket: string; action: "list"; task: string | null }
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
    printList(answer.value.items, args.task);
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

/** How many of one task's approvals the list shows before it says how many more it has. */
export const LISTED_PER_TASK = 3;

/**
 * The pending approvals, oldest first, grouped by task in the order of each one's oldest: each
 * task's oldest LISTED_PER_TASK blocks and a line of how many more it has, so that no task's many
 * approvals scroll another task's off the owner's screen (as the portal's Approvals page pages
 * them). With `task`, every approval of that task.
 */
function printList(items: PendingApprovalView[], task: string | null): void {
  const now = new Date();
  const oldestFirst = [...items].sort((a, b) => a.approval - b.approval);
  if (task !== null) {
    const own = oldestFirst.filter((item) => item.task === task);
    if (own.length === 0) {
      printOwner(`no approvals pending for task ${shownText(task, { max: 100 })}`);
    }
    for (const item of own) printOwner(approvalBlock(item, now));
    return;
  }
  if (oldestFirst.length === 0) printOwner("no approvals pending");
  const byTask = new Map<string, PendingApprovalView[]>();
  for (const item of oldestFirst) byTask.set(item.task, [...byTask.get(item.task) ?? [], item]);
  for (const [id, list] of byTask) {
    for (const item of list.slice(0, LISTED_PER_TASK)) printOwner(approvalBlock(item, now));
    const more = list.length - LISTED_PER_TASK;
    if (more > 0) {
      const shown = shownText(id, { max: 100 });
      printOwner(`${more} more from task ${shown}: gurt approvals --task ${shown}`);
    }
  }
}

/**
 * How many approvals one task may have open at once (`[approvals] max_per_task`): a task that asks
 * thousands of times would bury the owner, and another task's real approval with it. A call or ask
 * that would open one more is answered 429 before its Decision record is written, as the other caps
 * of the task socket are; nothing runs and nothing is asked. A slot is held from the decision to
 * ask until the approval is answered, expired, withdrawn or closed.
 */
import { HttpError } from "../common/mod.ts";
import type { BrokerDeps } from "./deps.ts";
import type { TaskHandle } from "./task_handle.ts";

/** Takes one of `task`'s approval slots; the 429 to answer if none is free. */
export function takeApprovalSlot(
  deps: Pick<BrokerDeps, "config">,
  task: TaskHandle,
): HttpError | null {
  const max = deps.config.approvals.max_per_task;
  if (task.openApprovals >= max) {
    return new HttpError(
      429,
      `this task has ${max} approvals waiting for the owner, its limit ([approvals] max_per_task); ` +
        "it may ask again once the owner has answered some or they have expired; " +
        "see runbook.md#approvals-per-task",
    );
  }
  task.openApprovals++;
  return null;
}

/** Gives back a slot takeApprovalSlot took. */
export function giveApprovalSlot(task: TaskHandle): void {
  task.openApprovals--;
}

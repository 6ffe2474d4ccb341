/**
 * Step 3 of seed 002 §5 for a call that ran (or will not run after its approval): the task's taint
 * raised and on disk, then the Result record, under the task's ledger.
 */
import { AuditUnavailableError } from "../audit/mod.ts";
import { type Decision, raisedState, raiseSessionState, readSessionState } from "../policy/mod.ts";
import type { BrokerDeps } from "./deps.ts";
import { resultEvent } from "./records.ts";
import type { TaskHandle } from "./task_handle.ts";

/** The call a Result record closes: its task, key and tool, and its Decision (seq and grant). */
export interface ResultCall {
  task: TaskHandle;
  key: string;
  tool: string;
  seq: number;
  decision: Decision;
}

/** What the run gave: its content (or failure message), never written to the log itself. */
export type RunOutcome = { status: "result" | "failed"; content: string; truncated: boolean };

/**
 * Raises the taint (for a result) and writes the Result record; false if either failed (logged).
 * `started` is called once the Result record has its place in the log and its sync is under way,
 * with the record's seq where the appender tells it (else null).
 */
export async function recordResult(
  deps: BrokerDeps,
  call: ResultCall,
  options: { outcome: RunOutcome; started?: (seq: number | null) => void },
): Promise<boolean> {
  const { task, decision } = call;
  const outcome = options.outcome;
  try {
    const written = await task.ledger.exclusive(async () => {
      const current = await readSessionState(deps.home, task.id);
      let after = current;
      if (outcome.status === "result") {
        const raised = raisedState(current, decision.label);
        // A state this core already wrote and synced, that the result does not raise, is on disk
        // as it should be: writing it again would cost two syncs and change nothing.
        const unchanged = task.stateWritten && raised.taint === current.taint &&
          raised.untrusted === current.untrusted;
        if (!unchanged) {
          after = await raiseSessionState(deps.home, task.id, decision.label);
          task.stateWritten = true;
        }
      }
      const ids = { task: task.id, key: call.key, tool: call.tool, decision: call.seq };
      // Placed in the log under the ledger (taint_after never goes down in log order), synced
      // outside it.
      let seq: number | null = null;
      const appended = deps.audit.append(
        resultEvent(ids, outcome, decision.label, after.taint),
        (placed) => (seq = placed),
      );
      appended.catch(() => {}); // awaited below
      // In an object: an async callback returning the promise would await it.
      return { appended, seq: seq as number | null };
    });
    options.started?.(written.seq);
    await written.appended;
    return true;
  } catch (error) {
    deps.log(
      error instanceof AuditUnavailableError
        ? auditFailure(error)
        : `gurt: the result of call ${call.key} of task ${task.id} could not be recorded: ${
          describe(error)
        }`,
    );
    return false;
  }
}

/** Closes an approved call that will not run with a failed Result record. */
export async function recordFailure(
  deps: BrokerDeps,
  call: ResultCall,
  options: { message: string },
): Promise<void> {
  await recordResult(deps, call, {
    outcome: { status: "failed", content: options.message, truncated: false },
  });
}

/** The core's line for a failed audit write. */
export function auditFailure(error: unknown): string {
  if (error instanceof AuditUnavailableError) return error.message;
  return `gurt: the audit log could not be written (${
    describe(error)
  }); every call is denied until gurt serve restarts; see runbook.md#audit-unavailable`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

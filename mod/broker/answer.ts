/**
 * Answering a pending approval. Whoever takes the entry out of the table answers it, writes the
 * Approval record, and only then tells the waiting call (docs/grants.md#approvals). Approve decides
 * again with the grants and the taint as they are now.
 */
import {
  type DenyReason,
  loadGrants,
  readSessionState,
  redecide,
  type SessionState,
  StateUnreadableError,
} from "../policy/mod.ts";
import { auditFailure } from "./result_record.ts";
import type { Approvals, BrokerDeps, Verdict } from "./deps.ts";
import { approvalEvent, type RecordedOutcome } from "./records.ts";

/** What an owner's answer came to; `missing` is no_such_approval. */
export type AnswerResult =
  | { kind: "answered"; outcome: RecordedOutcome }
  | { kind: "missing" }
  | { kind: "unrecorded" };

/** What answering an approval uses: the table, and what an Approval record is written with. */
export type AnswerDeps = Pick<BrokerDeps, "approvals" | "home" | "audit" | "log">;

/** What approving uses besides: the grants as they are now, and the clock they are checked at. */
export type ApproveDeps = AnswerDeps & Pick<BrokerDeps, "registry" | "clock">;

const UNKNOWN_STATE: SessionState = { taint: "secret", untrusted: true };

/** Approves a pending approval: re-decides, records, and lets the call run if still allowed. */
export async function approve(
  deps: ApproveDeps,
  answer: { id: number; by: string },
): Promise<AnswerResult> {
  const { id, by } = answer;
  const entry = deps.approvals.take(id);
  if (entry === undefined) return { kind: "missing" };
  const { task, ask } = entry.context;
  const grants = ask === null ? null : await loadGrants(`${deps.home}/grants`, {
    appTools: deps.registry.appToolNames(),
  });
  let verdict: Verdict = { kind: "denied", reason: "audit_unavailable" };
  let outcome: RecordedOutcome = { outcome: "denied", reason: "audit_unavailable" };
  try {
    await task.ledger.exclusive(async () => {
      let state = UNKNOWN_STATE;
      let grant: string | null = null;
      let grantSha256: string | null = null;
      let next: Verdict;
      try {
        state = await readSessionState(deps.home, task.id);
        if (ask === null) {
          next = { kind: "approved", decision: null };
        } else if (grants === null || !grants.ok) {
          next = { kind: "denied", reason: "grants_invalid" };
        } else {
          const again = redecide(ask, { grants: grants.grants, state, now: deps.clock() });
          if (again.kind === "allowed") {
            next = { kind: "approved", decision: again.decision };
            grant = again.decision.grant;
            grantSha256 = again.decision.grantSha256;
          } else {
            next = { kind: "denied", reason: again.denial.reason };
            grant = again.denial.grant;
            grantSha256 = again.denial.grant_sha256;
          }
        }
      } catch (error) {
        if (!(error instanceof StateUnreadableError)) throw error;
        deps.log(error.message);
        next = { kind: "denied", reason: "state_unreadable" };
      }
      const recorded: RecordedOutcome = next.kind === "approved"
        ? { outcome: "allowed" }
        : { outcome: "denied", reason: (next as { reason: DenyReason }).reason };
      await deps.audit.append(approvalEvent(
        { task: task.id, key: entry.shown.key, tool: entry.shown.tool, decision: id },
        { answer: "approved", by, reason: null, outcome: recorded, grant, grantSha256, state },
      ));
      verdict = next;
      outcome = recorded;
    });
  } catch (error) {
    deps.log(auditFailure(error));
    entry.settle({ kind: "denied", reason: "audit_unavailable" });
    return { kind: "unrecorded" };
  }
  entry.settle(verdict);
  return { kind: "answered", outcome };
}

/** Closes a pending approval as denied: refused by the owner, expired, or its task ended. */
export async function closeApproval(
  deps: AnswerDeps,
  how: { id: number; answer: "refused" | "expired"; by: string | null; reason: string | null },
): Promise<AnswerResult> {
  const { id } = how;
  const entry = deps.approvals.take(id);
  if (entry === undefined) return { kind: "missing" };
  const { task } = entry.context;
  const reason: DenyReason = how.answer === "refused" ? "approval_refused" : "approval_expired";
  const outcome: RecordedOutcome = { outcome: "denied", reason };
  try {
    await task.ledger.exclusive(async () => {
      let state = UNKNOWN_STATE;
      try {
        state = await readSessionState(deps.home, task.id);
      } catch (error) {
        if (!(error instanceof StateUnreadableError)) throw error;
      }
      await deps.audit.append(approvalEvent(
        { task: task.id, key: entry.shown.key, tool: entry.shown.tool, decision: id },
        {
          answer: how.answer,
          by: how.by,
          reason: how.reason,
          outcome,
          grant: null,
          grantSha256: null,
          state,
        },
      ));
    });
  } catch (error) {
    // The log lacks the answer, so no answer is kept for the key either: audit_unavailable is
    // the box's state, not the call's, and the call may be asked again once the log works.
    deps.log(auditFailure(error));
    entry.settle({ kind: "denied", reason: "audit_unavailable" });
    return { kind: "unrecorded" };
  }
  entry.settle({ kind: "denied", reason, note: how.reason });
  return { kind: "answered", outcome };
}

/** Expires every approval whose time has come. */
export async function expireDue(deps: AnswerDeps & Pick<BrokerDeps, "clock">): Promise<void> {
  for (const id of deps.approvals.expiredAt(deps.clock())) {
    await closeApproval(deps, { id, answer: "expired", by: null, reason: null });
  }
}

/** Closes every pending approval of a task that ended, as denied, answered by `task ended`. */
export async function closeTaskApprovals(deps: AnswerDeps, task: string): Promise<void> {
  for (const id of deps.approvals.ofTask(task)) {
    await closeApproval(deps, { id, answer: "refused", by: "task ended", reason: "task ended" });
  }
}

/**
 * Withdraws every pending approval when the core closes: nothing is written (the decisions show as
 * abandoned), and each waiting request answers pending, so its worker asks again after the restart.
 */
export function withdrawAll(approvals: Approvals): void {
  for (const shown of approvals.list()) {
    const entry = approvals.take(shown.approval);
    entry?.settle({ kind: "withdrawn" });
  }
}

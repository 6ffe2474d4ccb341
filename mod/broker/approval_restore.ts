/**
 * Pending approvals across a restart (docs/grants.md#approvals). The core keeps each open approval,
 * with what opens it again, in `run/approvals-open.json` as the table changes
 * (mod/core/open_approvals.ts). At the next start each reopened task's approvals are opened again
 * before its socket answers: with the same number and expiry, and the call (decided again with the
 * grants now, to get its Ask) or the /ask waiting on it as a flow in flight, which the request that
 * comes back (the same key, or the same tool and input) joins. One whose time ran out while the
 * core was down is closed as expired, as the expiry would have; one that cannot be opened again is
 * closed by an Approval record answered by `restart`. Nothing here runs a tool: approving a
 * restored call runs it once, on the call path.
 */
import { loadGrants, readSessionState, type SessionState } from "../policy/mod.ts";
import { type AskDeps, startAsk } from "./ask_path.ts";
import { decideCall, toolFacts } from "./call_decision.ts";
import { startCall } from "./call_path.ts";
import type { CallDeps } from "./call_transaction.ts";
import type { TaskContext } from "./deps.ts";
import { closeApproval, type KeptRequest, type PendingApproval } from "./approvals.ts";
import { approvalEvent } from "./records.ts";
import { auditFailure } from "./result_record.ts";
import type { AuditAppender } from "../common/mod.ts";

/** One approval open when the core stopped: what the owner was shown, and what opens it again. */
export interface KeptApproval {
  shown: PendingApproval;
  kept: KeptRequest | null;
}

/** What a start did with the approvals kept for one task, or for the whole box. */
export interface RestoreCounts {
  /** Open again, with their numbers. */
  restored: number;
  /** Closed as expired: their time ran out while the core was down. */
  expired: number;
  /** Closed by `restart`: they could not be opened again (see their Approval records). */
  closed: number;
}

/** What restoring uses: what a call's and an ask's paths use. */
export type RestoreDeps = CallDeps & AskDeps;

const UNKNOWN_STATE: SessionState = { taint: "secret", untrusted: true };

/**
 * Opens `task`'s kept approvals again, before its socket answers; closes those whose time has
 * come as expired, and those that cannot be opened again with an Approval record.
 */
export async function restoreApprovals(
  ctx: TaskContext<RestoreDeps>,
  kept: readonly KeptApproval[],
): Promise<RestoreCounts> {
  const { deps } = ctx;
  const counts: RestoreCounts = { restored: 0, expired: 0, closed: 0 };
  const opened: number[] = [];
  for (const one of kept) {
    const { shown } = one;
    if (deps.approvals.get(shown.approval) !== undefined) continue;
    const request = one.kept;
    const why = request === null
      ? "its request ended with gurt serve (a model request, or input holding a vault value)"
      : request.kind === "call"
      ? await reopenCall(ctx, { shown, call: request.call })
      : await reopenAsk(ctx, { shown, ask: request.ask });
    if (why === "answered") continue; // the journal has its answer: its Approval record is written
    if (why === null) {
      opened.push(shown.approval);
      continue;
    }
    const expired = Date.parse(shown.expires) <= deps.clock().getTime();
    await closeAtRestart(deps, { shown, reason: why, expired });
    if (expired) counts.expired++;
    else counts.closed++;
  }
  const now = deps.clock().getTime();
  for (const id of opened) {
    const entry = deps.approvals.get(id);
    if (entry === undefined) continue;
    if (Date.parse(entry.shown.expires) > now) {
      counts.restored++;
      continue;
    }
    await closeApproval(deps, { id, answer: "expired", by: null, reason: null });
    counts.expired++;
  }
  return counts;
}

/**
 * Opens a kept call's approval again: null once it is; "answered" if the journal answers its key;
 * else why it could not be.
 */
async function reopenCall(
  ctx: TaskContext<RestoreDeps>,
  kept: { shown: PendingApproval; call: Extract<KeptRequest, { kind: "call" }>["call"] },
): Promise<string | null | "answered"> {
  const { deps, task } = ctx;
  const { shown, call } = kept;
  if (task.journal.state.calls.has(call.key)) return "answered";
  if (task.callsByKey.has(call.key)) return "another call with its key is in flight";
  const body = { ...call };
  const tool = toolFacts(ctx, body);
  const grants = await loadGrants(`${deps.home}/grants`, {
    appTools: deps.registry.appToolNames(),
  });
  const { outcome, state } = await decideCall(ctx, { body, tool, grants });
  if (outcome.kind === "allowed") {
    return "decided again at the start, the grants no longer ask for it; the task's call is decided afresh";
  }
  if (outcome.kind === "denied") {
    return `decided again at the start, it is denied (${outcome.denial.reason})`;
  }
  task.openApprovals++; // its slot, given back when it is answered (call_transaction.ts)
  startCall(ctx, { body, resumed: { ask: outcome.ask, seq: shown.approval, state, shown } });
  return deps.approvals.get(shown.approval) === undefined ? "it could not be opened again" : null;
}

/** Opens a kept /ask's approval again, as reopenCall does a call's. */
async function reopenAsk(
  ctx: TaskContext<RestoreDeps>,
  kept: { shown: PendingApproval; ask: Extract<KeptRequest, { kind: "ask" }>["ask"] },
): Promise<string | null | "answered"> {
  const { deps, task } = ctx;
  const { shown, ask } = kept;
  if (task.journal.state.asks.has(ask.key)) return "answered";
  if (task.asksByKey.has(ask.key)) return "another ask with its key is in flight";
  const state = await stateOf(deps.home, task.id);
  startAsk(ctx, { body: { ...ask }, restored: { seq: shown.approval, state, shown } });
  return deps.approvals.get(shown.approval) === undefined ? "it could not be opened again" : null;
}

/** The task's session state, or the most restrictive where it cannot be read. */
async function stateOf(home: string, task: string): Promise<SessionState> {
  try {
    return await readSessionState(home, task);
  } catch {
    return UNKNOWN_STATE;
  }
}

/**
 * Closes a kept approval that cannot be opened again: an Approval record answered `refused` by
 * `restart`, with the reason, or `expired` (as the expiry writes it) if its time ran out while the
 * core was down. One the log cannot take is logged (and stays without an answer).
 */
export async function closeAtRestart(
  deps: { home: string; audit: AuditAppender; log(line: string): void },
  closing: { shown: PendingApproval; reason: string; expired?: boolean },
): Promise<void> {
  const { shown, reason } = closing;
  const state = await stateOf(deps.home, shown.task);
  const expired = closing.expired === true;
  try {
    await deps.audit.append(approvalEvent(
      { task: shown.task, key: shown.key, tool: shown.tool, decision: shown.approval },
      {
        answer: expired ? "expired" : "refused",
        by: expired ? null : "restart",
        reason: expired ? null : `closed by the restart of gurt serve: ${reason}`,
        outcome: { outcome: "denied", reason: expired ? "approval_expired" : "approval_refused" },
        grant: null,
        grantSha256: null,
        state,
      },
    ));
  } catch (error) {
    deps.log(auditFailure(error));
  }
}

/**
 * A call as one transaction: every durable write of POST /call, in the order docs/audit.md gives
 * ("The order of one call's writes"), read top to bottom in this file.
 *
 * 1. Decide with the grants and the task's taint, and write the Decision record and sync it. If
 *    that fails, nothing runs: denied, audit_unavailable.
 * 2. If ask: wait for the owner. Whoever answers writes the Approval record (approvals.ts) before the
 *    call goes on; approved, the call runs as decided again then.
 * 3. If allowed: the tool.call line, the run, the task's taint raised and on disk, the Result
 *    record with the tool.result line synced beside it, and only then the answer. A result whose
 *    state or Result record could not be written is not answered.
 *
 * A denial is answered after step 1 or 2, with policy's text (docs/grants.md, "What a denial looks
 * like to the task"). The call's cost is reserved from the moment it may run until its tool.result
 * line has charged it, or never will: one Reservation, released in one `finally` with the call's
 * journal.
 */
import { AuditUnavailableError } from "../audit/mod.ts";
import { redactValue } from "../common/mod.ts";
import {
  type Ask,
  type AskWhy,
  canonicalArguments,
  type Decision,
  denialText,
  type DenyReason,
  loadGrants,
  raisedState,
  raiseSessionState,
  readSessionState,
  type SessionState,
} from "../policy/mod.ts";
import {
  decideCall,
  type DecisionDeps,
  decisionRecord,
  type KeyedCall,
  type ToolFacts,
  toolFacts,
} from "./call_decision.ts";
import { runAllowedCall, type RunDeps, type RunOutcome, settledAtOnce } from "./call_run.ts";
import type { BrokerDeps, TaskContext } from "./deps.ts";
import type { CallAnswer, CallJournal, PlacedRecord } from "./journal.ts";
import { resultEvent } from "./records.ts";
import { Reservation } from "./reservation.ts";
import { auditFailure } from "./result_record.ts";
import type { FlowEnd, InFlight } from "./task_handle.ts";
import { giveApprovalSlot, takeApprovalSlot } from "./approval_cap.ts";
import type { HttpError } from "../common/mod.ts";
import type { KeptRequest, PendingApproval } from "./approvals.ts";

/**
 * What a call's transaction uses: what deciding and running it use, the grants' reporter, the
 * audit log, and the approvals table with the time an approval waits.
 */
export type CallDeps =
  & DecisionDeps
  & RunDeps
  & Pick<BrokerDeps, "grantsReporter" | "boxLog" | "audit" | "config" | "approvals">;

/** A call's context: its deps and its task. */
type Ctx = TaskContext<CallDeps>;

/** The answer of a call whose state or Result record could not be written (docs/audit.md). */
const UNRECORDED = "the result could not be recorded";

/** The answer of an approved call whose requester went away before it ran. */
const REQUESTER_GONE = "the requester went away";

/** Reasons that describe the box, not the call: not kept as the key's answer. */
const TRANSIENT: ReadonlySet<DenyReason> = new Set([
  "grants_invalid",
  "audit_unavailable",
  "state_unreadable",
]);

/**
 * A call's approval opened again at a restart (approval_restore.ts): its Ask as decided again at
 * the start, its Decision record's seq, the state, and what the owner was shown before.
 */
export interface ResumedAsk {
  ask: Ask;
  seq: number;
  state: SessionState;
  shown: PendingApproval;
}

/**
 * A call the core makes for a task from what the task sent by another door (a credentialed
 * request on its egress, mod/credentials): its tool is given, not looked up, and what the owner is
 * shown beside its arguments. Such a call is never opened again at a restart: what it answers is
 * gone with the connection.
 */
export interface GivenCall {
  tool: ToolFacts;
  /** Shown to the owner after the arguments in an approval (escaped as all approval text). */
  preview?: string;
}

/**
 * Decides, records, asks, runs and records one call; ends with its answer, or withdrawn. A call
 * `resumed` at a restart starts at step 2, waiting on its approval as it was.
 */
export async function transact(
  ctx: Ctx,
  call: { body: KeyedCall; flight: InFlight<unknown>; resumed?: ResumedAsk; given?: GivenCall },
): Promise<FlowEnd<CallAnswer>> {
  const { deps, task } = ctx;
  const { body, flight } = call;
  const tool = call.given?.tool ?? toolFacts(ctx, body);
  const journal = task.journal.call(
    { task: task.id, key: body.key, tool: body.tool, inputSha256: body.inputSha256 },
    { clock: deps.clock, log: deps.log },
  );
  const reservation = new Reservation(task);
  try {
    // 1. The Decision record, on disk before anything else happens.
    const decided: Decided = call.resumed === undefined
      ? await decisionStep(ctx, { body, tool, reservation })
      : { kind: "ask", ...call.resumed };
    if (decided.kind === "denied") {
      // An input its schema refused says what was wrong with it (the task's own input, and only
      // for a tool of the task's: an unlisted tool's schema is not quoted).
      const detail = decided.reason === "invalid_arguments" && tool.listed
        ? tool.problem
        : undefined;
      // A tool outside the task's list is recorded as no_grant, and told as what it is.
      const text = decided.reason === "no_grant" && !tool.listed
        ? notATaskTool(body.tool, task.record.tools)
        : undefined;
      return await denied(journal, { reason: decided.reason, detail, text });
    }
    if (decided.kind === "refused") return decided;
    let decision: Decision;
    if (decided.kind === "ask") {
      // 2. The owner's answer, its Approval record written by whoever took it.
      const verdict = await approvalStep(ctx, {
        body,
        flight,
        journal,
        step: decided,
        tool,
        given: call.given,
      }).finally(() => giveApprovalSlot(task));
      if (verdict.kind === "withdrawn") return verdict;
      if (verdict.kind === "denied") {
        return await denied(journal, { reason: verdict.reason, askedFor: decided.ask.why });
      }
      reservation.take(tool.cost);
      decision = verdict.decision;
      if (flight.requesterGone) {
        return await unrun(ctx, { body, seq: decided.seq, decision });
      }
    } else {
      decision = decided.decision;
    }
    // 3. The run, the taint, the Result record and the tool.result line, then the answer.
    return await runStep(ctx, { body, tool, journal, seq: decided.seq, decision });
  } finally {
    reservation.release();
    journal.end();
  }
}

/** What step 1 came to: denied, allowed, or ask; the last two with their Decision record's seq. */
type Decided =
  | { kind: "denied"; reason: DenyReason }
  | { kind: "allowed"; decision: Decision; seq: number }
  | { kind: "ask"; ask: Ask; seq: number; state: SessionState; shown?: PendingApproval }
  | { kind: "refused"; error: HttpError };

/**
 * Step 1. Reads the grants; then, under the task's ledger, reads the state, decides and places the
 * Decision record in the log. An allowed call takes its reservation there, so the task's next call
 * is decided with it. The record's sync is awaited outside the ledger: the task's other calls
 * decide meanwhile. A record that cannot be written denies with audit_unavailable.
 */
async function decisionStep(
  ctx: Ctx,
  call: { body: KeyedCall; tool: ToolFacts; reservation: Reservation },
): Promise<Decided> {
  const { deps, task } = ctx;
  const { body, tool } = call;
  const grants = await loadGrants(`${deps.home}/grants`, {
    appTools: deps.registry.appToolNames(),
  });
  const report = deps.grantsReporter.next(grants);
  // Said once for the box: to the core's log itself, or a task that used up its lines would hide it.
  if (report !== null) deps.boxLog(report);
  const placed = await task.ledger.exclusive(async () => {
    const { outcome, state } = await decideCall(ctx, { body, tool, grants });
    // An ask past the task's open approvals is refused before its record (approval_cap.ts).
    const full = outcome.kind === "ask" ? takeApprovalSlot(deps, task) : null;
    if (full !== null) return { full };
    const written = deps.audit.append(decisionRecord(ctx, { body, outcome, state }));
    written.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
    if (outcome.kind === "allowed") call.reservation.take(tool.cost);
    // In an object: an async callback returning the promise would await it.
    return { outcome, state, written };
  });
  if (placed.full !== undefined) return { kind: "refused", error: placed.full };
  let seq: number;
  try {
    seq = (await placed.written).seq;
  } catch (error) {
    deps.boxLog(auditFailure(error));
    if (placed.outcome.kind === "ask") giveApprovalSlot(task);
    return { kind: "denied", reason: "audit_unavailable" };
  }
  const { outcome, state } = placed;
  if (outcome.kind === "denied") return { kind: "denied", reason: outcome.denial.reason };
  if (outcome.kind === "ask") return { kind: "ask", ask: outcome.ask, seq, state };
  return { kind: "allowed", decision: outcome.decision, seq };
}

/** What the owner's answer came to. */
type Answered =
  | { kind: "approved"; decision: Decision }
  | { kind: "denied"; reason: DenyReason }
  | { kind: "withdrawn" };

/**
 * Step 2. Adds the pending approval (its id is the Decision record's seq), says so in the journal,
 * and waits for whoever answers it: approve, refuse, expiry, the task ending, or the requester
 * going away. The answerer has written the Approval record by the time its verdict arrives (a
 * withdrawal writes nothing).
 */
async function approvalStep(
  ctx: Ctx,
  call: {
    body: KeyedCall;
    flight: InFlight<unknown>;
    journal: CallJournal;
    step: { ask: Ask; seq: number; state: SessionState; shown?: PendingApproval };
    tool: ToolFacts;
    given?: GivenCall;
  },
): Promise<Answered> {
  const { deps, task } = ctx;
  const { body, step, flight } = call;
  const cost = call.tool.cost;
  const now = deps.clock();
  let expires = now.getTime() + deps.config.approvals.ttl_ms;
  if (step.ask.expires !== null) expires = Math.min(expires, step.ask.expires.getTime());
  const until = new Date(expires).toISOString();
  // Restored at a restart: its number, times and text as the owner saw them.
  const shown: PendingApproval = step.shown ?? {
    approval: step.seq,
    task: task.id,
    key: body.key,
    kind: step.ask.why === "budget" ? "budget" : "grant",
    tool: body.tool,
    arguments: deps.redact(
      call.given?.preview === undefined
        ? canonicalArguments(step.ask)
        : `${canonicalArguments(step.ask)} ${call.given.preview}`,
    ),
    grant: step.ask.grant,
    taint: step.state.taint,
    costCents: cost === 0 ? null : cost,
    created: now.toISOString(),
    expires: until,
  };
  const entry = deps.approvals.add(shown, {
    task,
    ask: step.ask,
    flight,
    costCents: cost,
    kept: call.given === undefined ? keptCall(deps, body) : null,
  });
  flight.markPending(step.seq);
  // A notice for the owner's view: what it shows is fetched from the admin socket. Said again for
  // one a restart opened again, so that a follower of the journal (gurt task watch) sees it.
  await call.journal.event("approval_pending", {
    approval: step.seq,
    tool: body.tool,
    expires: shown.expires,
    ...(step.shown === undefined ? {} : { restored: true }),
  });
  const verdict = await entry.verdict;
  if (verdict.kind !== "approved") return verdict;
  if (verdict.decision === null) throw new Error("an approved call came back without a decision");
  return { kind: "approved", decision: verdict.decision };
}

/** What a task that called a tool outside its list is told: which tools it has. */
function notATaskTool(tool: string, tools: readonly string[]): string {
  const shown = tools.length === 0 ? "none" : tools.slice(0, 50).join(", ");
  return `Denied: ${JSON.stringify(tool.slice(0, 200))} is not one of this task's tools ` +
    `(its tools: ${shown}); the owner chooses them with gurt task start --tools.`;
}

/**
 * What a restart needs to open the call's approval again: the call as the task sent it, unless its
 * input holds a vault value (then the approval closes at the restart, and the call asks afresh).
 */
function keptCall(deps: Pick<BrokerDeps, "redact">, body: KeyedCall): KeptRequest | null {
  const serialised = JSON.stringify(body.input);
  if (deps.redact(serialised) !== serialised || deps.redact(body.raw) !== body.raw) return null;
  const { tool, key, input, raw, inputSha256 } = body;
  return { kind: "call", call: { tool, key, input, raw, inputSha256 } };
}

/** Closes an approved call whose requester went away before it ran: a failed Result record. */
async function unrun(
  ctx: Ctx,
  call: { body: KeyedCall; seq: number; decision: Decision },
): Promise<FlowEnd<CallAnswer>> {
  const outcome: RunOutcome = { status: "failed", content: REQUESTER_GONE, truncated: false };
  await (await resultStep(ctx, { ...call, outcome })).synced;
  return { kind: "answer", answer: { ok: false, error: REQUESTER_GONE } };
}

/**
 * Answers a denial with policy's text, after step 1 or 2: a tool_denied event, and the answer kept
 * for the key unless the reason describes the box, not the call.
 */
async function denied(
  journal: CallJournal,
  denial: { reason: DenyReason; askedFor?: AskWhy; detail?: string; text?: string },
): Promise<FlowEnd<CallAnswer>> {
  const { reason, askedFor } = denial;
  const text = denial.text ?? denialText(reason, { askedFor });
  const error = denial.detail === undefined
    ? text
    : `${text.replace(/\.$/, "")}: ${denial.detail}.`;
  const answer: CallAnswer = { ok: false, error };
  await journal.event("tool_denied", { name: journal.tool, reason });
  if (!TRANSIENT.has(reason)) await journal.finish(answer, { cost: 0 });
  return { kind: "answer", answer };
}

/**
 * Step 3. The tool.call line goes in the journal before the tool runs. A tool that waits on
 * anything (every built-in tool, most app tools) runs while that line is synced; for one whose run
 * has ended at once, the line is synced with the tool.result line that follows it in the same file
 * (one sync instead of a second one beside the Result record's). Then the taint and the Result
 * record, with the tool.result line synced beside the record, and the answer.
 */
async function runStep(
  ctx: Ctx,
  call: { body: KeyedCall; tool: ToolFacts; journal: CallJournal; seq: number; decision: Decision },
): Promise<FlowEnd<CallAnswer>> {
  const { deps, task } = ctx;
  const { body, journal, seq, decision } = call;
  journal.begin(seq, redactValue(body.input, deps.redact));
  const { app, input, notOffered } = call.tool;
  const run = runAllowedCall(deps, { task, key: body.key, app, input, decision, notOffered });
  if (!(await settledAtOnce(run.started))) journal.sync();
  const outcome = await run.outcome;
  const record = await resultStep(ctx, { body, seq, decision, outcome });
  const answer: CallAnswer = outcome.status === "result"
    ? { ok: true, output: outcome.output }
    : { ok: false, error: outcome.content };
  const cost = outcome.status === "result" ? call.tool.cost : 0;
  if (!(await journal.finish(answer, { cost, record }))) {
    return { kind: "answer", answer: { ok: false, error: UNRECORDED } };
  }
  return { kind: "answer", answer };
}

/**
 * The taint raised by a result and on disk, then the Result record placed in the log, under the
 * task's ledger (taint_after never goes down in log order); the record's sync is under way when
 * this returns. A state or record that cannot be written is logged, and `synced` is false.
 */
async function resultStep(
  ctx: Ctx,
  call: { body: KeyedCall; seq: number; decision: Decision; outcome: RunOutcome },
): Promise<PlacedRecord> {
  const { deps, task } = ctx;
  const { body, decision, outcome } = call;
  const ids = { task: task.id, key: body.key, tool: body.tool, decision: call.seq };
  const failed = (error: unknown): false => {
    if (error instanceof AuditUnavailableError) {
      deps.boxLog(auditFailure(error));
      return false;
    }
    deps.log(
      `gurt: the result of call ${body.key} of task ${task.id} could not be recorded: ${
        error instanceof Error ? error.message : String(error)
      }`,
    );
    return false;
  };
  try {
    const placed = await task.ledger.exclusive(async () => {
      const after = await stateAfter(ctx, { decision, raise: outcome.status === "result" });
      let seq: number | null = null;
      const event = resultEvent(ids, { outcome, label: decision.label, taintAfter: after.taint });
      const appended = deps.audit.append(event, (at) => (seq = at));
      appended.catch(() => {}); // awaited by `synced`
      // In an object: an async callback returning the promise would await it.
      return { appended, seq: seq as number | null };
    });
    return { seq: placed.seq, synced: placed.appended.then(() => true, failed) };
  } catch (error) {
    return { seq: null, synced: Promise.resolve(failed(error)) };
  }
}

/**
 * The task's state after a call: read from its file again (the owner may have changed it), and
 * for a result raised by the Decision's label and on disk. A state this core already wrote and
 * synced, that the result does not raise, is left alone: writing it again would cost two syncs and
 * change nothing.
 */
async function stateAfter(
  ctx: Ctx,
  call: { decision: Decision; raise: boolean },
): Promise<SessionState> {
  const { deps, task } = ctx;
  const current = await readSessionState(deps.home, task.id);
  if (!call.raise) return current;
  const label = call.decision.label;
  const raised = raisedState(current, label);
  const unchanged = task.stateWritten && raised.taint === current.taint &&
    raised.untrusted === current.untrusted;
  if (unchanged) return current;
  const after = await raiseSessionState(deps.home, { task: task.id, label });
  task.stateWritten = true;
  return after;
}

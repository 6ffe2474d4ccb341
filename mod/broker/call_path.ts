/**
 * POST /call, in design.md's order: key, journal answer or join, tool and input, decide, write the
 * Decision record, wait on an approval where asked, run, raise the taint, write the Result record,
 * write the journal line, and only then answer (seed 002 §5, write order).
 */
import {
  type Ask,
  canonicalArguments,
  decide,
  type Decision,
  denialText,
  deniedOutcome,
  type DenyReason,
  type GrantLoad,
  loadGrants,
  type Outcome,
  readSessionState,
  type SessionState,
  StateUnreadableError,
} from "../policy/mod.ts";
import type { AppTool } from "../tools/mod.ts";
import { canonicalJson, inputDigest } from "./canonical_json.ts";
import type { BrokerDeps } from "./deps.ts";
import { HttpError } from "./http_error.ts";
import type { CallAnswer, KeyUse, PreparedLine } from "./journal.ts";
import { decisionEvent, type RecordedOutcome } from "./records.ts";
import { auditFailure, recordFailure } from "./result_record.ts";
import { InFlight, type TaskHandle } from "./task_handle.ts";
import { callEntry, type Ended, run } from "./call_run.ts";
import { waitOn } from "./waiting.ts";

/** A /call body, already checked for shape. */
export interface CallBody {
  tool: string;
  input: unknown;
  key: string;
  /** The input's JSON text exactly as received, which the Decision record keeps; else serialised. */
  raw?: string;
}

/** A call with the SHA-256 of its canonical input: what its key is bound to once used. */
export interface KeyedCall extends CallBody {
  inputSha256: string;
}

/** What /call answers: seed 000's bodies. */
export type CallResponse = CallAnswer | { ok: false; pending: true; error: string };

/** The pending body of seed 000, word for word. */
export const CALL_PENDING: CallResponse = {
  ok: false,
  pending: true,
  error: "Waiting for the box owner to approve this spend. Call this tool again to check.",
};

/** The answer when the owner refuses a call over budget (seed 000). */
const NOT_APPROVED = "not approved";

/** Reasons that describe the box, not the call: not kept as the key's answer. */
const TRANSIENT: ReadonlySet<DenyReason> = new Set([
  "grants_invalid",
  "audit_unavailable",
  "state_unreadable",
]);

/** The state recorded when it cannot be read: the most restrictive, so nothing is understated. */
const UNKNOWN_STATE: SessionState = { taint: "secret", untrusted: true };

/**
 * Answers one /call request. A key names one call (seed 000): used again for the same tool and
 * canonical input, it answers what the journal logged (or joins the call in flight); used for
 * another tool or input, it is refused with 409 before anything is decided, run or recorded.
 */
export async function handleCall(
  deps: BrokerDeps,
  task: TaskHandle,
  request: CallBody,
  signal: AbortSignal,
): Promise<CallResponse> {
  const body: KeyedCall = { ...request, inputSha256: inputDigest(request.input) };
  const used = task.journal.state.keys.get(body.key) ?? task.callsByKey.get(body.key)?.call ?? null;
  if (used !== null && !sameCall(used, body)) throw keyReused(body.key, used.tool);
  const answered = task.journal.state.calls.get(body.key);
  if (answered !== undefined) return answered;
  const inputKey = `${body.tool}\u0000${canonicalJson(body.input)}`;
  let flight = task.callsByKey.get(body.key) ?? task.callsByInput.get(inputKey);
  if (flight === undefined) {
    const started = new InFlight<unknown>({ tool: body.tool, inputSha256: body.inputSha256 });
    flight = started;
    task.callsByKey.set(body.key, started);
    task.callsByInput.set(inputKey, started);
    runFlow(deps, task, body, started).finally(() => {
      task.callsByKey.delete(body.key);
      task.callsByInput.delete(inputKey);
    });
  }
  const end = await waitOn(deps, task, flight, signal);
  if (end.kind === "answer") return end.answer as CallAnswer;
  // Withdrawn: the requester dropped its connection (nobody reads this) or the core is closing
  // (the worker asks again after the restart, and the call is decided afresh).
  return CALL_PENDING;
}

/** Whether a key used for `used` may answer `call`: the same tool, and the same input if known. */
function sameCall(used: KeyUse, call: KeyedCall): boolean {
  if (used.tool !== call.tool) return false;
  return used.inputSha256 === null || used.inputSha256 === call.inputSha256;
}

/** The 409 for a key already used for another call (Stripe's idempotency keys do the same). */
function keyReused(key: string, tool: string): HttpError {
  return new HttpError(
    409,
    `the key ${
      JSON.stringify(key)
    } was already used for another call (${tool}); use a new key for a new call`,
    "key_reused",
  );
}

async function runFlow(
  deps: BrokerDeps,
  task: TaskHandle,
  body: KeyedCall,
  flight: InFlight<unknown>,
): Promise<void> {
  try {
    flight.finish(await decideAndRun(deps, task, body, flight));
  } catch (error) {
    deps.log(
      `gurt: call ${body.key} of task ${task.id} failed inside the core: ${describe(error)}`,
    );
    flight.finish({ kind: "answer", answer: { ok: false, error: "the call failed inside gurt" } });
  }
}

async function decideAndRun(
  deps: BrokerDeps,
  task: TaskHandle,
  body: KeyedCall,
  flight: InFlight<unknown>,
): Promise<Ended> {
  // A tool outside the task's list is decided too (no_grant, with its Decision record): every
  // probe of a tool is in the log.
  const listed = task.record.tools.includes(body.tool);
  const app = listed ? deps.registry.app(body.tool) : undefined;
  let input = body.input;
  let cost = 0;
  let valid = true;
  if (app !== undefined) {
    const parsed = app.input.safeParse(body.input);
    valid = parsed.success;
    if (parsed.success) {
      input = parsed.data;
      cost = app.cost?.(input) ?? 0;
    }
  }
  const step = await decisionStep(deps, task, body, { app, input, cost, valid, listed });
  if (step.kind === "denied") return await deny(deps, task, body, step.reason, null);
  let decision: Decision;
  if (step.kind === "ask") {
    const verdict = await askOwner(deps, task, body, flight, { ...step, cost });
    if (verdict.kind === "withdrawn") return verdict;
    if (verdict.kind === "denied") {
      return await deny(deps, task, body, verdict.reason, step.ask.why);
    }
    decision = verdict.decision;
    task.reservedCents += cost;
    if (flight.requesterGone) {
      const ids = { task, key: body.key, tool: body.tool, seq: step.seq, decision };
      await recordFailure(deps, ids, { message: "the requester went away" });
      task.reservedCents -= cost;
      return { kind: "answer", answer: { ok: false, error: "the requester went away" } };
    }
  } else {
    decision = step.decision;
  }
  const callLine = step.kind === "allowed" ? step.callLine : null;
  return await run(deps, task, body, { app, input, cost, seq: step.seq, decision, callLine });
}

type Step =
  | { kind: "denied"; reason: DenyReason }
  | { kind: "allowed"; decision: Decision; seq: number; callLine: PreparedLine | null }
  | { kind: "ask"; ask: Ask; seq: number; state: SessionState };

/** What the Decision step knows of a call before it decides. */
interface CallFacts {
  app: AppTool<unknown> | undefined;
  input: unknown;
  cost: number;
  /** Whether the input parsed against the app tool's schema (true for a built-in tool). */
  valid: boolean;
  /** Whether the tool is one of the task's tools. */
  listed: boolean;
}

/**
 * The outcome of a call and the session state it was decided with, in seed 002 §3's order: the
 * grant set invalid, the state unreadable, the tool not one of the task's (no_grant), its input
 * not valid for its schema, then the grants. The state is read in every case, so the Decision
 * record shows the taint as it was; only one that cannot be read is recorded as the most
 * restrictive, so nothing is understated.
 */
async function decideCall(
  deps: BrokerDeps,
  task: TaskHandle,
  request: { body: KeyedCall; call: CallFacts; grants: GrantLoad },
): Promise<{ outcome: Outcome; state: SessionState }> {
  const { body, call, grants } = request;
  let state: SessionState;
  try {
    state = await readSessionState(deps.home, task.id);
  } catch (error) {
    if (!(error instanceof StateUnreadableError)) throw error;
    deps.log(error.message);
    const reason = grants.ok ? "state_unreadable" : "grants_invalid";
    return { outcome: deniedOutcome(reason), state: UNKNOWN_STATE };
  }
  if (!grants.ok) return { outcome: deniedOutcome("grants_invalid"), state };
  if (!call.listed) return { outcome: deniedOutcome("no_grant"), state };
  // The input was parsed against the tool's schema once, before; the parse is pure.
  if (!call.valid) return { outcome: deniedOutcome("invalid_arguments"), state };
  const budget = task.record.budgetCents;
  const overBudget = budget !== null && task.committedCents() + call.cost > budget;
  const outcome = decide({ tool: body.tool, arguments: call.input }, grants.grants, {
    state,
    now: deps.clock(),
    overBudget,
  });
  return { outcome, state };
}

/** Reads the grants and the state, decides, and writes the Decision record, under the ledger. */
async function decisionStep(
  deps: BrokerDeps,
  task: TaskHandle,
  body: KeyedCall,
  call: CallFacts,
): Promise<Step> {
  const grants = await loadGrants(`${deps.home}/grants`, {
    appTools: deps.registry.appToolNames(),
  });
  const report = deps.grantsReporter.next(grants);
  if (report !== null) deps.log(report);
  const decided = await task.ledger.exclusive(async () => {
    const { outcome, state } = await decideCall(deps, task, { body, call, grants });
    const recorded = recordedOutcome(outcome);
    const grant = outcome.kind === "allowed"
      ? outcome.decision
      : outcome.kind === "ask"
      ? outcome.ask
      : null;
    const event = decisionEvent(
      {
        task: task.id,
        key: body.key,
        tool: body.tool,
        arguments: argumentsText(deps, body),
      },
      recorded,
      {
        grant: grant?.grant ?? (outcome.kind === "denied" ? outcome.denial.grant : null),
        grantSha256: grant?.grantSha256 ??
          (outcome.kind === "denied" ? outcome.denial.grant_sha256 : null),
        state,
      },
    );
    // The record takes its place in the log now, in the ledger's order; its sync is awaited
    // outside the ledger, so the task's other calls decide while this one's record is synced.
    let placed: number | null = null;
    const written = deps.audit.append(event, (seq) => (placed = seq));
    written.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
    if (outcome.kind === "allowed") task.reservedCents += call.cost;
    return { outcome, state, written, placed: placed as number | null };
  });
  const { outcome, state } = decided;
  // The tool.call line of an allowed call is made while its Decision record is synced; it is
  // written only once the record is on disk (runAndRecord).
  let callLine: PreparedLine | null = null;
  if (outcome.kind === "allowed" && decided.placed !== null) {
    try {
      callLine = task.journal.prepare(callEntry(deps, body, decided.placed));
    } catch {
      // made again in runAndRecord, and its error thrown there
    }
  }
  let seq: number;
  try {
    seq = (await decided.written).seq;
  } catch (error) {
    if (outcome.kind === "allowed") task.reservedCents -= call.cost;
    deps.log(auditFailure(error));
    return { kind: "denied", reason: "audit_unavailable" };
  }
  if (outcome.kind === "denied") return { kind: "denied", reason: outcome.denial.reason };
  if (outcome.kind === "ask") return { kind: "ask", ask: outcome.ask, seq, state };
  return { kind: "allowed", decision: outcome.decision, seq, callLine };
}

/** Adds the pending approval and waits for whoever answers it. */
async function askOwner(
  deps: BrokerDeps,
  task: TaskHandle,
  body: CallBody,
  flight: InFlight<unknown>,
  step: { ask: Ask; seq: number; state: SessionState; cost: number },
): Promise<
  { kind: "approved"; decision: Decision } | { kind: "denied"; reason: DenyReason } | {
    kind: "withdrawn";
  }
> {
  const now = deps.clock();
  let expires = now.getTime() + deps.config.approvals.ttl_ms;
  if (step.ask.expires !== null) expires = Math.min(expires, step.ask.expires.getTime());
  const cost = step.cost;
  const entry = deps.approvals.add({
    approval: step.seq,
    task: task.id,
    key: body.key,
    kind: step.ask.why === "budget" ? "budget" : "grant",
    tool: body.tool,
    arguments: deps.redact(canonicalArguments(step.ask)),
    grant: step.ask.grant,
    taint: step.state.taint,
    costCents: cost === 0 ? null : cost,
    created: now.toISOString(),
    expires: new Date(expires).toISOString(),
  }, { task, ask: step.ask, flight, costCents: cost });
  flight.markPending(step.seq);
  deps.pendingChanged(task);
  // A notice for the owner's view (seed 002 §8): what it shows is fetched from the admin socket.
  await task.journal.append({
    type: "event",
    time: now.toISOString(),
    event: "approval_pending",
    detail: { approval: step.seq, tool: body.tool, expires: new Date(expires).toISOString() },
  }).catch((error) => deps.log(`gurt: the approval_pending event was not journalled: ${error}`));
  const verdict = await entry.verdict;
  if (verdict.kind === "approved") {
    if (verdict.decision === null) throw new Error("an approved call came back without a decision");
    return { kind: "approved", decision: verdict.decision };
  }
  return verdict;
}

/** Answers a denial, keeping it as the key's answer unless it describes the box, not the call. */
async function deny(
  deps: BrokerDeps,
  task: TaskHandle,
  body: KeyedCall,
  reason: DenyReason,
  askedFor: "grant" | "budget" | null,
): Promise<Ended> {
  const refusedSpend = askedFor === "budget" &&
    (reason === "approval_refused" || reason === "approval_expired");
  const answer: CallAnswer = { ok: false, error: refusedSpend ? NOT_APPROVED : denialText(reason) };
  await task.journal.append({
    type: "event",
    time: deps.clock().toISOString(),
    event: "tool_denied",
    detail: { name: body.tool, reason },
  }).catch((error) => deps.log(`gurt: the tool_denied event was not journalled: ${error}`));
  if (!TRANSIENT.has(reason)) {
    await task.journal.append({
      type: "tool.result",
      time: deps.clock().toISOString(),
      key: body.key,
      tool: body.tool,
      answer,
      cost: 0,
      input_sha256: body.inputSha256,
    });
  }
  return { kind: "answer", answer };
}

/**
 * The arguments a Decision record keeps: the input's text exactly as received, unless the input
 * holds a vault value. Then the input serialised again, which the audit appender redacts: in the
 * raw text the value could be spelled with JSON escapes no redactor looks for.
 */
function argumentsText(deps: BrokerDeps, body: CallBody): string {
  const serialised = JSON.stringify(body.input);
  if (body.raw === undefined || deps.redact(serialised) !== serialised) return serialised;
  return body.raw;
}

/** The Decision record's view of an outcome. */
export function recordedOutcome(outcome: Outcome): RecordedOutcome {
  if (outcome.kind === "allowed") return { outcome: "allowed" };
  if (outcome.kind === "ask") return { outcome: "ask" };
  return { outcome: "denied", reason: outcome.denial.reason };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * POST /call: a key names one call (docs/broker-api.md#keys-the-same-request-the-same-answer), as
 * Stripe's idempotency keys do. The same key with the same tool and canonical input answers what
 * the journal logged, or joins the call in flight; with another tool or input it is refused with
 * 409 before anything is decided, run or recorded. A new call is one transaction
 * (call_transaction.ts), which requests for it wait on.
 */
import { canonicalJson, inputDigest } from "./canonical_json.ts";
import type { KeyedCall } from "./call_decision.ts";
import { type CallDeps, type GivenCall, type ResumedAsk, transact } from "./call_transaction.ts";
import type { TaskContext } from "./deps.ts";
import { HttpError, isDiskFull } from "../common/mod.ts";
import { denialText } from "../policy/mod.ts";
import { failureRefusal } from "./failure_refusal.ts";
import type { CallAnswer, KeyUse } from "./journal.ts";
import type { CallResponse } from "../net/mod.ts";
import { InFlight } from "./task_handle.ts";
import type { CallBody } from "./task_schemas.ts";
import { waitOn } from "./waiting.ts";

/** The pending body of docs/broker-api.md#post-call, word for word. */
export const CALL_PENDING: CallResponse = {
  ok: false,
  pending: true,
  error: "Waiting for the box owner to approve this spend. Call this tool again to check.",
};

/**
 * Answers one /call request: its checked body, the input's text as received (`raw`), and the
 * `signal` that aborts when its requester drops the connection.
 */
export async function handleCall(
  ctx: TaskContext<CallDeps>,
  request: { body: CallBody; raw: string; signal: AbortSignal },
): Promise<CallResponse> {
  const { task } = ctx;
  // How long this request waits is its own, not the call's: the call is its tool, input and key.
  const { waitMs, ...call } = request.body;
  const body: KeyedCall = {
    ...call,
    raw: request.raw,
    inputSha256: inputDigest(request.body.input),
  };
  const used = task.journal.state.keys.get(body.key) ?? task.callsByKey.get(body.key)?.call ?? null;
  if (used !== null && !sameCall(used, body)) throw keyReused(body.key, used.tool);
  const answered = task.journal.state.calls.get(body.key);
  if (answered !== undefined) return answered;
  let flight = task.callsByKey.get(body.key) ?? task.callsByInput.get(inputKeyOf(body));
  if (flight === undefined) {
    flight = startCall(ctx, { body });
  } else if (flight.key !== null && flight.key !== body.key && !flight.joiners.has(body.key)) {
    // Joins another key's call: its key now names that call, and is answered with it.
    flight.joiners.add(body.key);
    task.callsByKey.set(body.key, flight);
  }
  const end = await waitOn(ctx.deps, { flight, signal: request.signal, waitMs });
  if (end.kind === "answer") {
    // Joined after the call's joiners were written: this key's line now.
    if (flight.joiners.has(body.key)) await answerJoiners(ctx, flight);
    return end.answer as CallAnswer;
  }
  if (end.kind === "refused") throw end.error;
  // Withdrawn: the requester dropped its connection (nobody reads this) or the core is closing
  // (the worker asks again after the restart, and the call is decided afresh).
  return CALL_PENDING;
}

/** What names a call by its tool and canonical input, for requests with other keys to join it. */
function inputKeyOf(body: KeyedCall): string {
  return `${body.tool}\u0000${canonicalJson(body.input)}`;
}

/**
 * Starts a call's transaction as the task's call in flight for its key and its input, which
 * requests join until it ends; `resumed`, an approval opened again at a restart.
 */
export function startCall(
  ctx: TaskContext<CallDeps>,
  call: { body: KeyedCall; resumed?: ResumedAsk },
): InFlight<unknown> {
  const { task } = ctx;
  const { body } = call;
  const inputKey = inputKeyOf(body);
  const started = new InFlight<unknown>({ tool: body.tool, inputSha256: body.inputSha256 });
  started.key = body.key;
  task.callsByKey.set(body.key, started);
  task.callsByInput.set(inputKey, started);
  runFlow(ctx, { body, flight: started, resumed: call.resumed }).finally(() => {
    task.callsByKey.delete(body.key);
    task.callsByInput.delete(inputKey);
    for (const key of started.joiners) task.callsByKey.delete(key);
  });
  return started;
}

/**
 * Starts the transaction of a call the core makes for the task from what it sent by another door
 * (request_call.ts): its own flight, which no other request joins.
 */
export function runGivenCall(
  ctx: TaskContext<CallDeps>,
  call: { body: KeyedCall; given: GivenCall },
): InFlight<unknown> {
  const flight = new InFlight<unknown>({
    tool: call.body.tool,
    inputSha256: call.body.inputSha256,
  });
  flight.key = call.body.key;
  runFlow(ctx, { body: call.body, flight, given: call.given });
  return flight;
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

/** Runs the call's transaction and ends its flight; a failure inside the core is logged. */
async function runFlow(
  ctx: TaskContext<CallDeps>,
  call: { body: KeyedCall; flight: InFlight<unknown>; resumed?: ResumedAsk; given?: GivenCall },
): Promise<void> {
  try {
    const end = await transact(ctx, call);
    if (end.kind === "answer") await answerJoiners(ctx, call.flight);
    call.flight.finish(end);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const what = `call ${call.body.key} of task ${ctx.task.id}`;
    // A record or line a full disk (or the dead audit writer) refused is the box's state, not a
    // bug: the call is denied audit_unavailable, as one whose Decision record failed.
    if (failureRefusal(error as Error) !== null || isDiskFull(error)) {
      ctx.deps.log(`gurt: the ${what} could not be recorded: ${message}; see runbook.md#disk-full`);
      const answer = { ok: false, error: denialText("audit_unavailable") };
      call.flight.finish({ kind: "answer", answer });
      return;
    }
    ctx.deps.log(`gurt: ${what} failed inside the core: ${message}`);
    call.flight.finish({
      kind: "answer",
      answer: { ok: false, error: "the call failed inside gurt" },
    });
  }
}

/**
 * Answers the keys that joined `flight` with its answer in the journal (a tool.joined line each),
 * once its own key's answer is there; a key whose line cannot be written is logged and left
 * unanswered (a retry of it is then decided afresh, as before it joined).
 */
async function answerJoiners(ctx: TaskContext<CallDeps>, flight: InFlight<unknown>): Promise<void> {
  const { task, deps } = ctx;
  const first = flight.key;
  if (first === null || flight.call === null) return;
  const state = task.journal.state;
  for (const key of flight.joiners) {
    if (!state.calls.has(first) || state.calls.has(key)) continue;
    await task.journal.append({
      type: "tool.joined",
      time: deps.clock().toISOString(),
      key,
      tool: flight.call.tool,
      joined: first,
      input_sha256: flight.call.inputSha256 as string,
    }).catch((error) =>
      deps.log(`gurt: the key ${key} that joined call ${first} was not journalled: ${error}`)
    );
  }
}

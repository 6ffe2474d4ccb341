/**
 * POST /ask: a worker asks the owner a question. It shares the approvals table with calls: its id
 * is its Decision record's seq. The same key returns the same answer, even after a restart.
 */
import { readSessionState, type SessionState, StateUnreadableError } from "../policy/mod.ts";
import { auditFailure } from "./result_record.ts";
import { canonicalJson } from "./canonical_json.ts";
import type { BrokerDeps, TaskContext } from "./deps.ts";
import { decisionEvent } from "./records.ts";
import { InFlight } from "./task_handle.ts";
import type { AskBody } from "./task_schemas.ts";
import { type WaitDeps, waitOn } from "./waiting.ts";

/** What an ask uses: the task's state, the audit log, the journal's redaction, the approvals. */
export type AskDeps =
  & WaitDeps
  & Pick<BrokerDeps, "home" | "audit" | "clock" | "log" | "redact">;

/** What /ask answers (docs/broker-api.md#post-ask). */
export type AskResponse = { approved: boolean } | { pending: true };

/** The tool name an /ask is recorded under in the audit log. */
export const ASK_TOOL = "box.ask";

/** Answers one /ask request; `signal` aborts when its requester drops the connection. */
export async function handleAsk(
  ctx: TaskContext<AskDeps>,
  request: { body: AskBody; signal: AbortSignal },
): Promise<AskResponse> {
  const { deps, task } = ctx;
  const { body } = request;
  const answered = task.journal.state.asks.get(body.key);
  if (answered !== undefined) return { approved: answered };
  let flight = task.asksByKey.get(body.key);
  if (flight === undefined) {
    const started = new InFlight<unknown>();
    flight = started;
    task.asksByKey.set(body.key, started);
    askFlow(ctx, { body, flight: started })
      .catch((error) => {
        deps.log(`gurt: ask ${body.key} of task ${task.id} failed inside the core: ${error}`);
        return { kind: "answer" as const, answer: false };
      })
      .then((end) => started.finish(end))
      .finally(() => task.asksByKey.delete(body.key));
  }
  const end = await waitOn(deps, { flight, signal: request.signal, waitMs: body.waitMs });
  if (end.kind === "answer") return { approved: end.answer === true };
  return { pending: true }; // pending, or withdrawn: see handleCall
}

async function askFlow(
  ctx: TaskContext<AskDeps>,
  ask: { body: AskBody; flight: InFlight<unknown> },
): Promise<{ kind: "answer"; answer: boolean } | { kind: "withdrawn" }> {
  const { deps, task } = ctx;
  const { body, flight } = ask;
  // The question's arguments as the owner sees them: not its key, nor how long one request waits.
  const { key: _key, waitMs: _waitMs, ...shown } = body;
  const argumentsText = canonicalJson(shown);
  const step = await task.ledger.exclusive(async () => {
    let state: SessionState;
    try {
      state = await readSessionState(deps.home, task.id);
    } catch (error) {
      if (!(error instanceof StateUnreadableError)) throw error;
      deps.log(error.message);
      return null;
    }
    try {
      const event = decisionEvent(
        { task: task.id, key: body.key, tool: ASK_TOOL, arguments: argumentsText },
        { outcome: { outcome: "ask" }, grant: null, grantSha256: null, state },
      );
      return { seq: (await deps.audit.append(event)).seq, state };
    } catch (error) {
      deps.log(auditFailure(error));
      return null;
    }
  });
  if (step === null) return { kind: "answer", answer: false };
  const now = deps.clock();
  await task.journal.append({
    type: "ask",
    time: now.toISOString(),
    key: body.key,
    question: deps.redact(body.question),
    approval: step.seq,
  });
  const entry = deps.approvals.add({
    approval: step.seq,
    task: task.id,
    key: body.key,
    kind: "ask",
    tool: ASK_TOOL,
    arguments: deps.redact(argumentsText),
    grant: null,
    taint: step.state.taint,
    costCents: body.costCents ?? null,
    created: now.toISOString(),
    expires: new Date(now.getTime() + deps.config.approvals.ttl_ms).toISOString(),
  }, { task, ask: null, flight, costCents: 0 });
  flight.markPending(step.seq);
  const verdict = await entry.verdict;
  if (verdict.kind === "withdrawn") return verdict;
  // An answer the audit log could not record is no answer to keep: the key may ask again.
  if (verdict.kind === "denied" && verdict.reason === "audit_unavailable") {
    return { kind: "answer", answer: false };
  }
  const approved = verdict.kind === "approved";
  await task.journal.append({
    type: "ask.answer",
    time: deps.clock().toISOString(),
    key: body.key,
    approved,
  });
  return { kind: "answer", answer: approved };
}

/**
 * POST /ask: a worker asks the owner a question. It shares the approvals table with calls: its id
 * is its Decision record's seq. The same key returns the same answer, even after a restart.
 */
import { readSessionState, type SessionState, StateUnreadableError } from "../policy/mod.ts";
import { auditFailure } from "./result_record.ts";
import { canonicalJson } from "./canonical_json.ts";
import type { BrokerDeps, TaskContext } from "./deps.ts";
import type { AskAnswer } from "./journal_lines.ts";
import { decisionEvent } from "./records.ts";
import { InFlight } from "./task_handle.ts";
import type { AskBody } from "./task_schemas.ts";
import { type WaitDeps, waitOn } from "./waiting.ts";
import { giveApprovalSlot, takeApprovalSlot } from "./approval_cap.ts";
import { type HttpError, isDiskFull } from "../common/mod.ts";
import { failureRefusal } from "./failure_refusal.ts";
import type { KeptRequest, PendingApproval } from "./approvals.ts";

/** What an ask uses: the task's state, the audit log, the journal's redaction, the approvals. */
export type AskDeps =
  & WaitDeps
  & Pick<BrokerDeps, "home" | "audit" | "clock" | "log" | "boxLog" | "redact" | "config">;

/**
 * What /ask answers (docs/broker-api.md#post-ask): a refusal with the owner's reason if they gave
 * one; a pending answer with the approval it waits on, if it still does.
 */
export type AskResponse =
  | { approved: true }
  | { approved: false; reason?: string }
  | { pending: true; approval?: number };

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
  if (answered !== undefined) return responseOf(answered);
  const flight = task.asksByKey.get(body.key) ?? startAsk(ctx, { body });
  const end = await waitOn(deps, { flight, signal: request.signal, waitMs: body.waitMs });
  if (end.kind === "answer") return responseOf(end.answer as AskAnswer);
  if (end.kind === "refused") throw end.error;
  // Pending, or withdrawn (see handleCall), when the flow no longer waits on an approval.
  const approval = end.kind === "pending" ? flight.approval : null;
  return approval === null ? { pending: true } : { pending: true, approval };
}

/** An ask's approval opened again at a restart: its seq, the state, what the owner was shown. */
export interface RestoredAsk {
  seq: number;
  state: SessionState;
  shown: PendingApproval;
}

/**
 * Starts an ask as the task's ask in flight for its key, which requests with the key join until
 * it ends; `restored`, an approval opened again at a restart (approval_restore.ts).
 */
export function startAsk(
  ctx: TaskContext<AskDeps>,
  ask: { body: AskBody; restored?: RestoredAsk },
): InFlight<unknown> {
  const { deps, task } = ctx;
  const { body } = ask;
  const started = new InFlight<unknown>();
  task.asksByKey.set(body.key, started);
  askFlow(ctx, { body, flight: started, restored: ask.restored })
    .catch((error) => {
      // A line a full disk refused is the box's state, not a bug of the core's.
      const how = isDiskFull(error) || failureRefusal(error) !== null
        ? "could not be recorded"
        : "failed inside the core";
      deps.log(`gurt: ask ${body.key} of task ${task.id} ${how}: ${error}`);
      return { kind: "answer" as const, answer: NO };
    })
    .then((end) => started.finish(end))
    .finally(() => task.asksByKey.delete(body.key));
  return started;
}

/** A no whose reason is not the owner's: the box could not ask, or could not keep the answer. */
const NO: AskAnswer = { approved: false, reason: null };

function responseOf(answer: AskAnswer): AskResponse {
  if (answer.approved) return { approved: true };
  return answer.reason === null ? { approved: false } : { approved: false, reason: answer.reason };
}

async function askFlow(
  ctx: TaskContext<AskDeps>,
  ask: { body: AskBody; flight: InFlight<unknown>; restored?: RestoredAsk },
): Promise<
  { kind: "answer"; answer: AskAnswer } | { kind: "withdrawn" } | {
    kind: "refused";
    error: HttpError;
  }
> {
  const { deps, task } = ctx;
  const { body, flight } = ask;
  // The question's arguments as the owner sees them: not its key, nor how long one request waits.
  const { key: _key, waitMs: _waitMs, ...shown } = body;
  const argumentsText = canonicalJson(shown);
  // Past the task's open approvals, refused before its record (approval_cap.ts); one restored
  // was open before, and holds its slot whatever the limit is now.
  if (ask.restored === undefined) {
    const full = takeApprovalSlot(deps, task);
    if (full !== null) return { kind: "refused", error: full };
  } else {
    task.openApprovals++;
  }
  try {
    return await askOnce(ctx, { body, flight, argumentsText, restored: ask.restored });
  } finally {
    giveApprovalSlot(task);
  }
}

async function askOnce(
  ctx: TaskContext<AskDeps>,
  ask: {
    body: AskBody;
    flight: InFlight<unknown>;
    argumentsText: string;
    restored?: RestoredAsk;
  },
): Promise<{ kind: "answer"; answer: AskAnswer } | { kind: "withdrawn" }> {
  const { deps, task } = ctx;
  const { body, flight, argumentsText, restored } = ask;
  const step = restored ?? await task.ledger.exclusive(async () => {
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
      deps.boxLog(auditFailure(error));
      return null;
    }
  });
  if (step === null) return { kind: "answer", answer: NO };
  const now = deps.clock();
  if (restored === undefined) {
    await task.journal.append({
      type: "ask",
      time: now.toISOString(),
      key: body.key,
      question: deps.redact(body.question),
      approval: step.seq,
    });
  }
  const shown: PendingApproval = restored?.shown ?? {
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
  };
  // What a restart opens it again with: the question, unless it holds a vault value.
  const { waitMs: _wait, ...asked } = body;
  const kept: KeptRequest | null = deps.redact(argumentsText) === argumentsText
    ? { kind: "ask", ask: asked }
    : null;
  const entry = deps.approvals.add(shown, { task, ask: null, flight, costCents: 0, kept });
  flight.markPending(step.seq);
  const verdict = await entry.verdict;
  if (verdict.kind === "withdrawn") return verdict;
  // An answer the audit log could not record is no answer to keep: the key may ask again.
  if (verdict.kind === "denied" && verdict.reason === "audit_unavailable") {
    return { kind: "answer", answer: NO };
  }
  const approved = verdict.kind === "approved";
  // The owner's reason for a refusal reaches the task, so it passes the vault's redactor.
  const note = verdict.kind === "denied" && typeof verdict.note === "string" ? verdict.note : null;
  const reason = note === null ? null : deps.redact(note);
  await task.journal.append({
    type: "ask.answer",
    time: deps.clock().toISOString(),
    key: body.key,
    approved,
    ...(reason === null ? {} : { reason }),
  });
  return { kind: "answer", answer: { approved, reason } };
}

/**
 * A task's model requests over its budget (docs/grants.md#budgets). When the cents the task has
 * committed (spent, and reserved by its calls under way) are at or past its budget, its next model
 * request is held as an owner approval of kind `budget`, recorded as a tool call's is: a Decision
 * record (tool `box.model`, outcome ask, no grant) whose seq is the approval's id, and the Approval
 * record whoever answers writes (approvals.ts). The requests that arrive while it is open wait on the
 * same approval, each up to [approvals] wait_ms (waiting.ts), as a retried call does.
 *
 * Approved, the requests waiting are sent, and so is every later one until the task's committed
 * cents grow past what they were at the approval: the next charge (a model answer's, a call's,
 * /cost) brings the next request back to the owner. Refused, expired or closed with its task, the
 * requests waiting are refused, and the next request asks again.
 */
import { readSessionState, type SessionState, StateUnreadableError } from "../policy/mod.ts";
import { denialText } from "../policy/mod.ts";
import { canonicalJson } from "./canonical_json.ts";
import type { BrokerDeps, TaskContext, Verdict } from "./deps.ts";
import { decisionEvent } from "./records.ts";
import { centsText } from "../common/mod.ts";
import { auditFailure } from "./result_record.ts";
import { type FlowEnd, InFlight, type TaskHandle } from "./task_handle.ts";
import { type WaitDeps, waitOn } from "./waiting.ts";

/** The tool name a model request's budget ask is recorded and shown under. */
export const MODEL_TOOL = "box.model";

/** What holding a model request uses: the approvals and their wait, the audit log, the journal. */
export type ModelBudgetDeps =
  & WaitDeps
  & Pick<BrokerDeps, "home" | "audit" | "clock" | "log" | "boxLog" | "redact">;

/** The model request a task's endpoint asks about: the service, the model it names, the path. */
export interface ModelRequestFacts {
  service: string;
  model: string | null;
  path: string;
}

/**
 * What became of a model request: sent; refused (a sentence for the task); still waiting on the
 * owner when its wait ended (a sentence naming the approval); or its requester left.
 */
export type ModelAdmission =
  | { kind: "admitted" }
  | { kind: "refused"; message: string }
  | { kind: "waiting"; message: string }
  | { kind: "gone" };

/** The state recorded when it cannot be read: the most restrictive, so nothing is understated. */
const UNKNOWN_STATE: SessionState = { taint: "secret", untrusted: true };

const SERVICE_NAMES: Record<string, string> = { anthropic: "Anthropic", openai: "OpenAI" };

/**
 * Admits one model request of a task, or holds it for the owner while the task is at or past its
 * budget; `signal` aborts when its requester leaves.
 */
export async function admitModelRequest(
  ctx: TaskContext<ModelBudgetDeps>,
  request: { facts: ModelRequestFacts; signal: AbortSignal },
): Promise<ModelAdmission> {
  const { deps, task } = ctx;
  if (!overBudget(task)) return { kind: "admitted" };
  let flight = task.modelBudgetAsk;
  if (flight === null) {
    const started = new InFlight<unknown>();
    flight = started;
    task.modelBudgetAsk = started;
    budgetFlow(ctx, { facts: request.facts, flight: started })
      .catch((error): FlowEnd<ModelAdmission> => {
        deps.log(`gurt: a model request of task ${task.id} over its budget failed: ${error}`);
        return { kind: "answer", answer: { kind: "refused", message: failedMessage() } };
      })
      .then((end) => started.finish(end))
      .finally(() => {
        if (task.modelBudgetAsk === started) task.modelBudgetAsk = null;
      });
  }
  const end = await waitOn(deps, { flight, signal: request.signal });
  if (end.kind === "answer") return end.answer as ModelAdmission;
  if (end.kind === "dropped") return { kind: "gone" };
  // Pending, or withdrawn (gurt serve is stopping): the client tries again.
  return { kind: "waiting", message: waitingMessage(task, flight.approval) };
}

/** Whether the task's next model request must ask: at or past its budget, and not let on. */
function overBudget(task: TaskHandle): boolean {
  const budget = task.record.budgetCents;
  if (budget === null) return false;
  const committed = task.committedCents();
  if (committed < budget) return false;
  return task.modelSpendApproved === null || committed > task.modelSpendApproved;
}

/**
 * The Decision record, the pending approval and its journal event, then the owner's answer. An
 * approval lets the task's model requests on until its committed cents grow past their sum now.
 */
async function budgetFlow(
  ctx: TaskContext<ModelBudgetDeps>,
  ask: { facts: ModelRequestFacts; flight: InFlight<unknown> },
): Promise<FlowEnd<ModelAdmission>> {
  const { deps, task } = ctx;
  const { facts, flight } = ask;
  const now = deps.clock();
  const spentCents = Number(task.committedCents().toFixed(4));
  const budgetCents = task.record.budgetCents;
  const why = `task ${task.id}'s model spend, ${
    centsText(spentCents)
  }, is at or past its budget of ${centsText(budgetCents ?? 0)}: approve to send its requests to ${
    SERVICE_NAMES[facts.service] ?? facts.service
  } (${facts.model ?? "no model named"}) until it spends more`;
  const argumentsText = canonicalJson({ ...facts, spentCents, budgetCents, why });
  const key = `model.budget ${now.toISOString()}`;
  const step = await task.ledger.exclusive(async () => {
    let state = UNKNOWN_STATE;
    try {
      state = await readSessionState(deps.home, task.id);
    } catch (error) {
      if (!(error instanceof StateUnreadableError)) throw error;
      deps.log(error.message);
    }
    try {
      const event = decisionEvent(
        { task: task.id, key, tool: MODEL_TOOL, arguments: argumentsText },
        { outcome: { outcome: "ask" }, grant: null, grantSha256: null, state },
      );
      return { seq: (await deps.audit.append(event)).seq, state };
    } catch (error) {
      deps.boxLog(auditFailure(error));
      return null;
    }
  });
  if (step === null) {
    return { kind: "answer", answer: { kind: "refused", message: refusedMessage(task, null) } };
  }
  const expires = new Date(now.getTime() + deps.config.approvals.ttl_ms).toISOString();
  const entry = deps.approvals.add({
    approval: step.seq,
    task: task.id,
    key,
    kind: "budget",
    tool: MODEL_TOOL,
    arguments: deps.redact(argumentsText),
    grant: null,
    taint: step.state.taint,
    costCents: null,
    created: now.toISOString(),
    expires,
  }, { task, ask: null, flight, costCents: 0, kept: null });
  flight.markPending(step.seq);
  await task.journal.append({
    type: "event",
    time: now.toISOString(),
    event: "approval_pending",
    detail: { approval: step.seq, tool: MODEL_TOOL, expires },
  }).catch((error) => deps.log(`gurt: the approval_pending event was not journalled: ${error}`));
  const verdict = await entry.verdict;
  if (verdict.kind === "withdrawn") return verdict;
  if (verdict.kind === "approved") {
    task.modelSpendApproved = task.committedCents();
    return { kind: "answer", answer: { kind: "admitted" } };
  }
  const message = refusedMessage(task, verdict, deps.redact);
  return { kind: "answer", answer: { kind: "refused", message } };
}

/** The sentence for a request still waiting on the owner when its wait ended. */
function waitingMessage(task: TaskHandle, approval: number | null): string {
  const spend = `this task's model spend (${
    centsText(task.committedCents())
  }) is at or past its budget (${centsText(task.record.budgetCents ?? 0)})`;
  const answer = approval === null
    ? "the owner's approval was withdrawn (gurt serve is stopping, or every request waiting on it left)"
    : `it waits for the owner to answer approval ${approval} (gurt approve ${approval}, or gurt refuse ${approval})`;
  return `gurt: ${spend}, so its model requests are held; ${answer}; try again. see runbook.md#model-budget`;
}

/** The sentence for a request the owner's answer (or its absence) refused. */
function refusedMessage(
  task: TaskHandle,
  verdict: Extract<Verdict, { kind: "denied" }> | null,
  redact: (text: string) => string = (text) => text,
): string {
  const spend = `this task's model spend (${
    centsText(task.committedCents())
  }) is at or past its budget (${centsText(task.record.budgetCents ?? 0)})`;
  let why: string;
  if (verdict === null) {
    why = `the box could not ask the owner (${denialText("audit_unavailable")})`;
  } else if (verdict.reason === "approval_refused") {
    why = verdict.note === undefined || verdict.note === null
      ? "the owner refused to let its model requests on"
      : `the owner refused to let its model requests on: ${redact(verdict.note)}`;
  } else if (verdict.reason === "approval_expired") {
    why = "the owner's approval expired unanswered";
  } else {
    why = `the owner's approval could not let it on (${denialText(verdict.reason)})`;
  }
  return `gurt: ${spend}, and ${why}. Retrying will ask the owner again. see runbook.md#model-budget`;
}

function failedMessage(): string {
  return "gurt: this task's model request over its budget failed inside gurt; see runbook.md#model-budget";
}

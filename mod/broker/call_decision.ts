/**
 * What a call is decided with and what its Decision record says (docs/grants.md, "How a call is
 * decided"): the facts about its tool and input found before deciding, the outcome from policy's
 * decideLoaded with the task's state and budget, and the record that keeps it. Nothing here
 * writes; call_transaction.ts does.
 */
import type { AuditEvent } from "../audit/mod.ts";
import {
  decideLoaded,
  type GrantLoad,
  type Outcome,
  readSessionState,
  type SessionState,
  StateUnreadableError,
} from "../policy/mod.ts";
import { type AppTool, isBuiltin } from "../tools/mod.ts";
import type { BrokerDeps, TaskContext } from "./deps.ts";
import { decisionEvent, type RecordedOutcome } from "./records.ts";
import type { CallBody } from "./task_schemas.ts";

/**
 * A /call body with the input's JSON text exactly as received (which the Decision record keeps),
 * and the SHA-256 of its canonical input: what its key is bound to once used.
 */
export interface KeyedCall extends CallBody {
  raw: string;
  inputSha256: string;
}

/** What deciding a call uses: the tools, the task's state file, the clock, the redaction. */
export type DecisionDeps = Pick<BrokerDeps, "registry" | "home" | "clock" | "log" | "redact">;

/** What is known of a call's tool before it is decided. */
export interface ToolFacts {
  /** The app tool; undefined for a built-in tool, a name no tool has, or one not the task's. */
  app: AppTool<unknown> | undefined;
  /** The input, as the app tool's schema parsed it. */
  input: unknown;
  /** What the app tool says the call costs, in cents. */
  cost: number;
  /** Whether the input parsed against the app tool's schema (true for a built-in tool). */
  valid: boolean;
  /** What the schema said was wrong with the input, where it said. */
  problem?: string;
  /** Whether the tool is one of the task's tools. */
  listed: boolean;
  /**
   * For a task's app tool that is not offered now (its app turned off or removed since the task
   * started), why, in a sentence: an allowed call of it fails with that. Null otherwise.
   */
  notOffered: string | null;
}

/** The state recorded when it cannot be read: the most restrictive, so nothing is understated. */
const UNKNOWN_STATE: SessionState = { taint: "secret", untrusted: true };

/**
 * The tool of a call, its input parsed once against the app tool's schema, and its cost. A tool
 * outside the task's list is decided too (no_grant, with its Decision record): every probe of a
 * tool is in the log.
 */
export function toolFacts(ctx: TaskContext<DecisionDeps>, body: CallBody): ToolFacts {
  const { deps, task } = ctx;
  const listed = task.record.tools.includes(body.tool);
  const app = listed ? deps.registry.app(body.tool) : undefined;
  if (app === undefined) {
    const notOffered = listed && !isBuiltin(body.tool) ? deps.registry.notOffered(body.tool) : null;
    return { app, input: body.input, cost: 0, valid: true, listed, notOffered };
  }
  const parsed = app.input.safeParse(body.input);
  if (!parsed.success) {
    // An installed app's check says what was wrong in a sentence (zod's message is its issue list).
    const problem = app.inputSchema === undefined ? undefined : parsed.error?.message;
    return {
      app,
      input: body.input,
      cost: 0,
      valid: false,
      listed,
      notOffered: null,
      ...(typeof problem === "string" && problem !== "" ? { problem: problem.slice(0, 500) } : {}),
    };
  }
  const cost = app.cost?.(parsed.data) ?? 0;
  return { app, input: parsed.data, cost, valid: true, listed, notOffered: null };
}

/**
 * The outcome of a call and the session state it was decided with. The state is read in every
 * case, so the Decision record shows the taint as it was; only one that cannot be read is
 * recorded as the most restrictive. A call with a cost of its own that, with the cents the task
 * spent and those its running calls reserved, would pass the budget asks the owner; a free call
 * takes nothing, so a task already over its budget still makes it as its grant says (seed 003).
 */
export async function decideCall(
  ctx: TaskContext<DecisionDeps>,
  call: { body: CallBody; tool: ToolFacts; grants: GrantLoad },
): Promise<{ outcome: Outcome; state: SessionState }> {
  const { deps, task } = ctx;
  const { body, tool } = call;
  let state: SessionState | null = null;
  try {
    state = await readSessionState(deps.home, task.id);
  } catch (error) {
    if (!(error instanceof StateUnreadableError)) throw error;
    deps.log(error.message);
  }
  const budget = task.record.budgetCents;
  const outcome = decideLoaded({ tool: body.tool, arguments: tool.input }, {
    load: call.grants,
    state,
    now: deps.clock(),
    overBudget: budget !== null && tool.cost > 0 && task.committedCents() + tool.cost > budget,
    offered: tool.listed,
    inputValid: tool.valid,
  });
  return { outcome, state: state ?? UNKNOWN_STATE };
}

/** The Decision record of a call: its arguments, the outcome, the grant, the state. */
export function decisionRecord(
  ctx: TaskContext<DecisionDeps>,
  call: { body: KeyedCall; outcome: Outcome; state: SessionState },
): AuditEvent {
  const { deps, task } = ctx;
  const { body, outcome } = call;
  const matched = outcome.kind === "allowed"
    ? { grant: outcome.decision.grant, grantSha256: outcome.decision.grantSha256 }
    : outcome.kind === "ask"
    ? { grant: outcome.ask.grant, grantSha256: outcome.ask.grantSha256 }
    : { grant: outcome.denial.grant, grantSha256: outcome.denial.grant_sha256 };
  return decisionEvent(
    { task: task.id, key: body.key, tool: body.tool, arguments: argumentsText(deps, body) },
    { outcome: recordedOutcome(outcome), ...matched, state: call.state },
  );
}

/**
 * The arguments a Decision record keeps: the input's text exactly as received, unless the input
 * holds a vault value. Then the input serialised again, which the audit appender redacts: in the
 * raw text the value could be spelled with JSON escapes no redactor looks for.
 */
function argumentsText(deps: DecisionDeps, body: KeyedCall): string {
  const serialised = JSON.stringify(body.input);
  return deps.redact(serialised) !== serialised ? serialised : body.raw;
}

/** The Decision record's view of an outcome. */
function recordedOutcome(outcome: Outcome): RecordedOutcome {
  if (outcome.kind === "allowed") return { outcome: "allowed" };
  if (outcome.kind === "ask") return { outcome: "ask" };
  return { outcome: "denied", reason: outcome.denial.reason };
}

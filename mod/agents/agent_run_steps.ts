/**
 * What `gurt agent-run` keeps in its task's steps (POST /step), and reads back from GET /task at a
 * restart: the agent's session as soon as it is known, and at the end its final answer with its
 * exit code. Pure: the steps in, the steps to write out.
 */
import type { AgentName, AgentOutcome } from "./adapter.ts";

/** A step as POST /step takes it. */
export interface AgentStep {
  text: string;
  data: { agent: AgentStepData };
}

/** The `agent` member of a step's data. */
export interface AgentStepData {
  name: AgentName;
  /** The session to resume. */
  session: string | null;
  /** Present on the last step of a run: how it ended. */
  final?: { ok: boolean; code: number };
}

/** What the task's earlier steps say of agent `name`: its session, and whether it has ended. */
export interface KeptRun {
  session: string | null;
  /** The end of an earlier run, when the last step of the agent's is its final answer. */
  final: { ok: boolean; code: number } | null;
}

/** Reads the agent's steps among the task's (GET /task's `steps`). */
export function keptRun(steps: readonly { data: unknown }[], name: AgentName): KeptRun {
  let session: string | null = null;
  let final: KeptRun["final"] = null;
  for (const step of steps) {
    const data = agentData(step.data);
    if (data === null || data.name !== name) continue;
    if (data.session !== null) session = data.session;
    final = data.final ?? null;
  }
  return { session, final };
}

function agentData(data: unknown): AgentStepData | null {
  if (typeof data !== "object" || data === null || !("agent" in data)) return null;
  const agent = (data as { agent: unknown }).agent;
  if (typeof agent !== "object" || agent === null) return null;
  const { name, session, final } = agent as Record<string, unknown>;
  if (typeof name !== "string") return null;
  const kept: AgentStepData = {
    name: name as AgentName,
    session: typeof session === "string" && session !== "" ? session : null,
  };
  if (typeof final === "object" && final !== null) {
    const { ok, code } = final as Record<string, unknown>;
    if (typeof ok === "boolean" && typeof code === "number") kept.final = { ok, code };
  }
  return kept;
}

/** The step that keeps the agent's session, to resume it after a restart. */
export function sessionStep(name: AgentName, session: string): AgentStep {
  return { text: `${name} session ${session}`, data: { agent: { name, session } } };
}

/** The last step of a run: the agent's final answer, and how it ended. */
export function finalStep(
  name: AgentName,
  ended: { outcome: AgentOutcome; session: string | null; code: number },
): AgentStep {
  const { outcome, code } = ended;
  const text = outcome.answer ??
    `${name} ended with status ${code} and gave no final answer; its output is in the task's worker.log`;
  return {
    text,
    data: {
      agent: { name, session: outcome.session ?? ended.session, final: { ok: outcome.ok, code } },
    },
  };
}

/** The worker's exit status: the agent's, and 1 when it exited 0 without finishing its work. */
export function exitStatus(outcome: AgentOutcome, code: number): number {
  if (code !== 0) return code;
  return outcome.ok ? 0 : 1;
}

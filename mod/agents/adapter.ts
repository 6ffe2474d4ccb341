/**
 * What gurt knows of one coding agent it runs as a task's worker (Claude Code, Codex, Droid,
 * OpenCode): its npm package, the files it reads its settings from (written into the task's home at
 * every start and resume), how it is run without a terminal, and how its output tells its session,
 * its final answer and whether it finished. Adapters are pure: `gurt agent-run` (inside the task's
 * sandbox) does the writing, running and reading.
 */

/** The agents gurt runs as workers. */
export type AgentName = "claude" | "codex" | "droid" | "opencode";

/** The agents, in the order gurt names them. */
export const AGENT_NAMES: readonly AgentName[] = ["claude", "codex", "droid", "opencode"];

/** What an adapter is given to write an agent's settings and command line. */
export interface AgentContext {
  /** The task's prompt. */
  prompt: string;
  /** The model the task names, else null (the adapter's own default, documented in it). */
  model: string | null;
  /**
   * The box's model for a task that names none (GET /model: BOX_MODEL, else gurt.toml's `[models]
   * model`), else null when the socket did not say. Droid's bring-your-own-key model uses it.
   */
  boxModel?: string | null;
  /**
   * The API of the owner's provider that serves `model` (GET /model's `provider`: the task's model,
   * else the box's), for an agent that picks its wire by it; null or absent for a built-in
   * service's model, whose wire its name says. Applies only where the agent runs that model.
   */
  modelApi?: { model: string; api: "anthropic" | "openai-responses" | "openai-chat" } | null;
  /** The task user's home inside the sandbox (its HOME), absolute. */
  home: string;
  /** How to run `gurt mcp` inside the task: program then arguments. */
  mcp: { command: string; args: string[]; env: Record<string, string> };
  /**
   * The task's model endpoint as the worker's environment names it: ANTHROPIC_BASE_URL (an origin,
   * no /v1), OPENAI_BASE_URL (ending in /v1), and the placeholder key every SDK sends.
   */
  endpoint: { anthropic: string; openai: string; placeholder: string };
  /** How long `gurt mcp` holds a call that waits for the owner, in ms (under the agent's timeout). */
  mcpWaitMs: number;
  /**
   * Which model services the vault holds a key for, where an agent's settings depend on it (the
   * adapter cannot see the vault). `factory`: FACTORY_API_KEY is there, so Droid uses Factory's own
   * models through api.factory.ai (README.md#droid); absent or false, Droid brings the box's key.
   */
  services?: { factory: boolean };
}

/** An agent's command line inside the task. */
export interface AgentCommand {
  /** Arguments after the agent's binary. */
  args: string[];
  /** Environment added to the worker's (never a key: the endpoint holds the keys). */
  env: Record<string, string>;
}

/** What the agent's output says at its end. */
export interface AgentOutcome {
  /** The session to resume, if the output named one. */
  session: string | null;
  /** The agent's final answer, if it gave one. */
  answer: string | null;
  /** Whether the agent says it finished its work (not an error, not a refusal to go on). */
  ok: boolean;
}

/** One agent. */
export interface AgentAdapter {
  name: AgentName;
  /** The npm package, the pinned version install.sh installs, its binary under the install dir. */
  package: { name: string; version: string; bin: string };
  /**
   * Files to write, by path relative to the task's home, with their text: the agent's settings
   * with the box's MCP server, the model endpoint with the placeholder key, permission settings
   * that let it call the box's tools without asking (the grants are the permission).
   */
  files(context: AgentContext): Record<string, string>;
  /**
   * Whether gurt chooses the session id before the first run (Claude Code's --session-id): then
   * `gurt agent-run` makes a UUID, keeps it in a step, and passes it to `command` at every run.
   */
  choosesSession: boolean;
  /**
   * The command line. `session`: the id to start with (chosen by gurt) or to resume (kept in a
   * step from an earlier run of this task), or null for a fresh start whose id the output names.
   */
  command(
    context: AgentContext,
    session: { id: string; resume: boolean } | null,
  ): AgentCommand;
  /** The session id one line of the agent's stdout names, as soon as it does (for a crash). */
  sessionIn(line: string): string | null;
  /** Reads the agent's whole stdout and exit code at its end. */
  outcome(stdout: string, code: number): AgentOutcome;
}

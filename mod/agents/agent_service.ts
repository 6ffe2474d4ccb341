/**
 * Which model service an agent task's requests go to, so that a task whose service has no key in
 * the vault fails at once with the endpoint's sentence (Claude Code retries a 401 for minutes).
 * Pure.
 */
import type { AgentName } from "./adapter.ts";
import { CLAUDE_DEFAULT_MODEL } from "./claude.ts";
import { CODEX_DEFAULT_MODEL } from "./codex.ts";
import { DROID_DEFAULT_MODEL } from "./droid.ts";
import { OPENCODE_DEFAULT_MODEL } from "./opencode.ts";

const DEFAULT_MODELS: Record<AgentName, string> = {
  claude: CLAUDE_DEFAULT_MODEL,
  codex: CODEX_DEFAULT_MODEL,
  droid: DROID_DEFAULT_MODEL,
  opencode: OPENCODE_DEFAULT_MODEL,
};

/**
 * The service an agent's model requests go to: Claude Code speaks only Anthropic's Messages and
 * Codex only OpenAI's Responses; Droid and OpenCode speak Anthropic's for a `claude-*` model and
 * OpenAI's otherwise. (Droid with Factory's key in the vault goes to Factory: the caller's case.)
 */
export function agentService(agent: AgentName, model: string | null): "anthropic" | "openai" {
  if (agent === "claude") return "anthropic";
  if (agent === "codex") return "openai";
  return (model ?? DEFAULT_MODELS[agent]).startsWith("claude-") ? "anthropic" : "openai";
}

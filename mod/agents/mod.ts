/**
 * The coding agents gurt runs as task workers (`gurt task start --worker claude|codex|droid|opencode`):
 * each agent's adapter (adapter.ts), where install.sh puts its npm package, and the sentence for
 * one that is missing. `gurt agent-run` (agent_run_main.ts, the worker role) runs an adapter inside
 * its task's sandbox.
 */
export {
  AGENT_NAMES,
  type AgentAdapter,
  type AgentCommand,
  type AgentContext,
  type AgentName,
  type AgentOutcome,
} from "./adapter.ts";
export {
  adapterOf,
  agentBinary,
  agentDir,
  AGENTS_DIR,
  MCP_WAIT_MS,
  missingAgent,
} from "./registry.ts";
export type { AgentRunArgs } from "./agent_run_main.ts";
export { agentService } from "./agent_service.ts";

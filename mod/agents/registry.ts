/** Every agent's adapter by name, where install.sh puts each, and the sentence for a missing one. */
import type { AgentAdapter, AgentName } from "./adapter.ts";
import { claudeAdapter } from "./claude.ts";
import { codexAdapter } from "./codex.ts";
import { droidAdapter } from "./droid.ts";
import { opencodeAdapter } from "./opencode.ts";

/** Where install.sh installs each agent's npm package: `<AGENTS_DIR>/<name>`. */
export const AGENTS_DIR = "/usr/local/lib/gurt/agents";

/**
 * How long `gurt mcp` holds a call that waits for the owner before it answers the "call again"
 * text, in ms: under every agent's own call timeout (Codex 300 s, Droid 180 s, OpenCode 60 s).
 */
export const MCP_WAIT_MS = 50_000;

const ADAPTERS: Record<AgentName, AgentAdapter> = {
  claude: claudeAdapter,
  codex: codexAdapter,
  droid: droidAdapter,
  opencode: opencodeAdapter,
};

/** The adapter of the agent named `name`. */
export function adapterOf(name: AgentName): AgentAdapter {
  return ADAPTERS[name];
}

/** The folder install.sh installs the agent's package into. */
export function agentDir(adapter: AgentAdapter): string {
  return `${AGENTS_DIR}/${adapter.name}`;
}

/** The agent's binary as install.sh leaves it. */
export function agentBinary(adapter: AgentAdapter): string {
  return `${agentDir(adapter)}/${adapter.package.bin}`;
}

/**
 * The sentence for an agent whose binary is not where install.sh puts it, else null when it is
 * there and is a file.
 */
export async function missingAgent(adapter: AgentAdapter): Promise<string | null> {
  const binary = agentBinary(adapter);
  const found = await Deno.stat(binary).then((info) => info.isFile, () => false);
  if (found) return null;
  const { name, version } = adapter.package;
  return `the ${adapter.name} agent is not installed: ${binary} is missing. Install ${name}@${version} ` +
    `with ./install.sh (as root, from gurt's checkout; it installs every agent into ${AGENTS_DIR}), ` +
    `or npm install --prefix ${agentDir(adapter)} ${name}@${version}; see runbook.md#agent-missing`;
}

/**
 * A box for the Claude Code tests, as root: a core on a fresh home whose tasks run as their own
 * users in their sandboxes, the scripted fake Anthropic service as `[models] anthropic_base_url`,
 * a canary key under ANTHROPIC_API_KEY in the vault, and the real `gurt` command on its home.
 */
import { type AgentBox, stepTexts, withAnthropicFakeBox } from "./agent_box.ts";
import {
  type FakeAnthropic,
  type FakeAnthropicOptions,
  startFakeAnthropic,
} from "../../mod/stand-in/anthropic.ts";

/** Claude Code's binary as install.sh installs it. */
export const CLAUDE_BINARY =
  "/usr/local/lib/gurt/agents/claude/node_modules/@anthropic-ai/claude-code/bin/claude.exe";

/** Why the Claude Code tests cannot run here, else null. */
export function claudeSkip(): string | null {
  if (Deno.uid() !== 0) return "they run tasks as their own users: run them as root";
  try {
    Deno.statSync(CLAUDE_BINARY);
  } catch {
    return `no Claude Code at ${CLAUDE_BINARY}: ./install.sh --test installs it`;
  }
  return null;
}

export { stepTexts };

/** What a test gets: agent_box.ts's box, the fake, and the vault's key. */
export interface ClaudeBox extends AgentBox {
  fake: FakeAnthropic;
  /** The vault's model key, made at run time so that no file the task can see holds it. */
  key: string;
}

/** Runs `work` on a Claude box with `grants` and the fake's `options`, closed afterwards. */
export async function withClaudeBox(
  setup: {
    grants: Record<string, string>;
    fake?: FakeAnthropicOptions;
    toml?: string;
    /** The vault's key (default: a new canary). */
    key?: string;
    /** The core's registry with the apps' tools (agent_box.ts's AgentBoxSetup.apps). */
    apps?: boolean;
  },
  work: (claude: ClaudeBox) => Promise<void>,
): Promise<void> {
  await withAnthropicFakeBox("claude", startFakeAnthropic(setup.fake), setup, work);
}

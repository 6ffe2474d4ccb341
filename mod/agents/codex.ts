/**
 * STUB written by the agent-run framework so mod/agents/mod.ts compiles: the codex adapter's owner
 * replaces this whole file. Until then a codex task fails at once, saying so.
 */
import type { AgentAdapter } from "./adapter.ts";

function notYet(): never {
  throw new Error("the codex adapter is not written yet");
}

/** Codex (a stub). */
export const codexAdapter: AgentAdapter = {
  name: "codex",
  package: { name: "codex-not-yet", version: "0.0.0", bin: "not-yet" },
  files: notYet,
  choosesSession: false,
  command: notYet,
  sessionIn: () => null,
  outcome: () => ({ session: null, answer: null, ok: false }),
};

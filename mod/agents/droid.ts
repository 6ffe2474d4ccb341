/**
 * STUB written by the agent-run framework so mod/agents/mod.ts compiles: the droid adapter's owner
 * replaces this whole file. Until then a droid task fails at once, saying so.
 */
import type { AgentAdapter } from "./adapter.ts";

function notYet(): never {
  throw new Error("the droid adapter is not written yet");
}

/** Droid (a stub). */
export const droidAdapter: AgentAdapter = {
  name: "droid",
  package: { name: "droid-not-yet", version: "0.0.0", bin: "not-yet" },
  files: notYet,
  choosesSession: false,
  command: notYet,
  sessionIn: () => null,
  outcome: () => ({ session: null, answer: null, ok: false }),
};

/**
 * A box for the Codex tests, as root: the agents' box (agent_box.ts) with the scripted fake
 * Responses service as `[models] openai_base_url` and a canary key under OPENAI_API_KEY in the
 * vault.
 */
import { type AgentBox, agentSkip, withAgentBox } from "./agent_box.ts";
import {
  type FakeResponses,
  type FakeResponsesOptions,
  startFakeResponses,
} from "../../mod/stand-in/responses.ts";

/** Why the Codex task tests cannot run here, else null. */
export function codexSkip(): string | null {
  return agentSkip("codex");
}

/** What a test gets: the agents' box, the fake and the vault's key. */
export interface CodexBox extends AgentBox {
  fake: FakeResponses;
  /** The vault's model key, made at run time so that no file the task can see holds it. */
  key: string;
}

/** Runs `work` on a Codex box with `grants` and the fake's `options`, closed afterwards. */
export async function withCodexBox(
  setup: {
    grants: Record<string, string>;
    fake?: Partial<FakeResponsesOptions>;
    toml?: string;
    /** The vault's key (default: a new canary). */
    key?: string;
  },
  work: (codex: CodexBox) => Promise<void>,
): Promise<void> {
  const key = setup.key ?? `sk-proj-canary-${crypto.randomUUID().slice(0, 12)}`;
  const fake = startFakeResponses({ agent: "codex", ...setup.fake });
  try {
    await withAgentBox({
      agent: "codex",
      grants: setup.grants,
      vault: { OPENAI_API_KEY: key },
      toml: `[models]\nopenai_base_url = "${fake.url}"\n${setup.toml ?? ""}`,
      endMs: 60_000,
    }, (agent) => work({ ...agent, fake, key }));
  } finally {
    await fake.close();
  }
}

/**
 * A box for the Codex tests, as root: a core on a fresh home whose tasks run as their own users in
 * their sandboxes, the scripted fake Responses service as `[models] openai_base_url`, a canary key
 * under OPENAI_API_KEY in the vault, and the real `gurt` command on its home.
 */
import { adapterOf, agentBinary } from "../../mod/agents/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { gurt, type GurtRun, type Json, startBox, taskEnd, type TestBox } from "../kit/mod.ts";
import {
  type FakeResponses,
  type FakeResponsesOptions,
  startFakeResponses,
} from "./fake_responses.ts";

/** Codex's binary as install.sh installs it. */
export const CODEX_BINARY = agentBinary(adapterOf("codex"));

/** Why the Codex task tests cannot run here, else null. */
export function codexSkip(): string | null {
  if (Deno.uid() !== 0) return "they run tasks as their own users: run them as root";
  try {
    Deno.statSync(CODEX_BINARY);
  } catch {
    return `no Codex at ${CODEX_BINARY}: ./install.sh --test installs it`;
  }
  return null;
}

/** What a test gets. */
export interface CodexBox {
  box: TestBox;
  fake: FakeResponses;
  /** The vault's model key, made at run time so that no file the task can see holds it. */
  key: string;
  /** `gurt --home HOME ARGS`. */
  cli(args: string[]): Promise<GurtRun>;
  /** `gurt task start --worker codex … PROMPT`, checked: the task's id. */
  start(prompt: string, options?: { hosts?: string; model?: string }): Promise<string>;
  /** Waits for the task to end: its record, its worker's log, its journal. */
  end(id: string): Promise<{ task: Json; log: string; journal: Json[] }>;
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
  const vault: Record<string, string> = { OPENAI_API_KEY: key };
  let box: TestBox | null = null;
  try {
    box = await startBox({
      core: { asRoot: true, vault: { value: (n) => vault[n], names: () => Object.keys(vault) } },
      toml: `[models]\nopenai_base_url = "${fake.url}"\n${setup.toml ?? ""}`,
      grants: setup.grants,
    });
    const home = box.home;
    const opened = box;
    const cli = (args: string[]) => gurt(["--home", home, ...args]);
    await work({
      box: opened,
      fake,
      key,
      cli,
      async start(prompt, options = {}) {
        const hosts = options.hosts === undefined ? [] : ["--hosts", options.hosts];
        const model = options.model === undefined ? [] : ["--model", options.model];
        const started = await cli([
          "task",
          "start",
          "--worker",
          "codex",
          "--tools",
          "example.echo",
          ...hosts,
          ...model,
          prompt,
        ]);
        assertEquals(started.code, 0, started.stderr);
        const id = started.stdout.trim().split("\n").at(-1) ?? "";
        assert(/^[a-z0-9]+$/.test(id), `gurt task start printed ${started.stdout}`);
        return id;
      },
      async end(id) {
        const { task, log } = await taskEnd(opened, id, 60_000);
        const journal = (await opened.admin("GET", `/tasks/${id}`)).body.journal as Json[];
        return { task, log, journal };
      },
    });
  } finally {
    if (box !== null) {
      for (const task of (await box.admin("GET", "/tasks")).body.tasks as Json[]) {
        if (task.state === "running" || task.state === "waiting") {
          await box.admin("POST", `/tasks/${task.id}/stop`);
        }
      }
      await box.close();
    }
    await fake.close();
  }
}

/** The texts of a journal's steps. */
export function stepTexts(journal: Json[]): string[] {
  return journal.filter((line) => line.type === "step").map((line) => String(line.text));
}

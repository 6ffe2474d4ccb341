/**
 * An agent task whose model service has no key in the vault fails at once with the endpoint's
 * model-key-missing sentence (Claude Code would retry the 401 for minutes): Claude Code needs
 * Anthropic's key, Codex OpenAI's, OpenCode and Droid their model's service's, and Droid also
 * works with Factory's. And only where the vault holds FACTORY_API_KEY is a worker told its
 * placeholder, which Droid takes to mean "use Factory".
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { type Json, startBox, type TestBox } from "../kit/mod.ts";
import { workerEnv } from "../../mod/core/worker_process.ts";
import type { TaskRecord } from "../../mod/broker/mod.ts";

async function agentTask(box: TestBox, agent: string, model: string | null): Promise<Json> {
  const answer = await box.admin("POST", "/tasks", {
    worker: { kind: "agent", agent, model },
    prompt: "tidy up",
    tools: ["example.echo"],
    budgetCents: null,
  });
  assertEquals(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.task;
}

async function withVault(vault: Record<string, string>, body: (box: TestBox) => Promise<void>) {
  const box = await startBox({
    core: { vault: { value: (name) => vault[name], names: () => Object.keys(vault) } },
  });
  try {
    await body(box);
  } finally {
    await box.close();
  }
}

Deno.test("an agent task whose service has no key in the vault fails at once, naming the key", async () => {
  await withVault({ OPENAI_API_KEY: "sk-openai" }, async (box) => {
    for (
      const [agent, model] of [["claude", null], ["droid", null], ["opencode", "claude-haiku-4-5"]]
    ) {
      const task = await agentTask(box, agent!, model);
      assertEquals(task.state, "failed", agent!);
      assertStringIncludes(task.endReason, "The box's vault has no ANTHROPIC_API_KEY", agent!);
      assertStringIncludes(task.endReason, "see runbook.md#model-key-missing");
    }
  });
  await withVault({ ANTHROPIC_API_KEY: "sk-ant" }, async (box) => {
    for (const [agent, model] of [["codex", null], ["opencode", null], ["droid", "gpt-5"]]) {
      const task = await agentTask(box, agent!, model);
      assertEquals(task.state, "failed", agent!);
      assertStringIncludes(task.endReason, "The box's vault has no OPENAI_API_KEY", agent!);
    }
  });
});

Deno.test("Droid with only Factory's key in the vault is not failed for a missing model key", async () => {
  await withVault({ FACTORY_API_KEY: "fk-factory" }, async (box) => {
    const task = await agentTask(box, "droid", null);
    assertEquals(String(task.endReason ?? "").includes("No model key yet"), false);
  });
});

Deno.test("a worker gets the FACTORY_API_KEY placeholder only when the vault holds Factory's key", () => {
  const task = { id: "t1" } as TaskRecord;
  const places = { socket: "/s", dir: "/d", egress: true, model: true, ca: true };
  assertEquals(workerEnv(task, places).FACTORY_API_KEY, undefined);
  assertEquals(workerEnv(task, { ...places, factory: false }).FACTORY_API_KEY, undefined);
  assertEquals(
    workerEnv(task, { ...places, factory: true }).FACTORY_API_KEY,
    "gurt-placeholder-key",
  );
  // A worker with no model endpoint gets no model placeholders at all.
  assertEquals(
    workerEnv(task, { ...places, model: false, factory: true }).FACTORY_API_KEY,
    undefined,
  );
});

Deno.test("a task whose model a provider serves needs that provider's key, not the built-in service's", async () => {
  const toml = `[models.providers.local]
base_url = "http://127.0.0.1:11434/v1"
api = "openai-chat"
key = "OLLAMA_KEY"
models = ["qwen3-*"]
`;
  for (
    const [vault, fails] of [[{ OPENAI_API_KEY: "sk-openai" }, true], [
      { OLLAMA_KEY: "x" },
      false,
    ]] as const
  ) {
    const held: Record<string, string> = vault;
    const box = await startBox({
      toml,
      core: { vault: { value: (name) => held[name], names: () => Object.keys(held) } },
    });
    try {
      for (const model of ["local/llama3.2", "qwen3-coder"]) {
        const task = await agentTask(box, "opencode", model);
        const reason = String(task.endReason ?? "");
        assertEquals(reason.includes("OLLAMA_KEY"), fails, `${model}: ${reason}`);
        if (fails) {
          assertEquals(task.state, "failed");
          assertStringIncludes(reason, `served by provider local`);
          assertStringIncludes(reason, "see runbook.md#provider-key-missing");
        }
        // Never the built-in service's key: the vault without OPENAI_API_KEY does not fail it.
        assertEquals(reason.includes("OPENAI_API_KEY"), false, reason);
      }
    } finally {
      await box.close();
    }
  }
});

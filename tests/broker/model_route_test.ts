/**
 * The task socket's GET /model: the model a loop asks for and its limits, with no key. Model
 * requests go to the task's model endpoint; the task socket relays none (POST /model is gone).
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { requestJson } from "../../mod/net/mod.ts";
import { startFakeModel } from "../loop/fake_model.ts";
import { type LoopBox, startLoopBox } from "../loop/loop_box.ts";
import { type Json, startBox } from "../kit/mod.ts";

async function noneTask(box: LoopBox): Promise<string> {
  const started = await box.admin("POST", "/tasks", { worker: { kind: "none" }, tools: [] });
  return started.body.task.id;
}

Deno.test("GET /model gives [models] model for a task that names none, and the loop's limits, and no key", async () => {
  const model = startFakeModel([]);
  const box = await startLoopBox({
    modelUrl: model.url,
    model: "gpt-5",
    vault: { OPENAI_API_KEY: "sk-openai-test-123456" },
  });
  try {
    const id = await noneTask(box);
    const socket = `${box.home}/tasks/${id}/broker.sock`;
    const info = await requestJson(socket, { method: "GET", path: "/model" });
    assertEquals(info.body, { model: "gpt-5", maxTokens: 4096, maxTurns: 50, provider: null });
  } finally {
    await box.close();
    await model.close();
  }
});

Deno.test("POST /model on the task socket is refused as forbidden, and nothing reaches the model service", async () => {
  const model = startFakeModel([{ text: "hi" }]);
  const box = await startLoopBox({
    modelUrl: model.url,
    vault: { ANTHROPIC_API_KEY: "sk-ant-test-000000" },
  });
  try {
    const id = await noneTask(box);
    const socket = `${box.home}/tasks/${id}/broker.sock`;
    const answer = await requestJson(socket, {
      method: "POST",
      path: "/model",
      body: { model: "claude-sonnet-5-5", messages: [{ role: "user", content: "hi" }] },
    });
    assertEquals(answer.status, 403);
    assertStringIncludes(
      (answer.body as { error: string }).error,
      "POST /model is not answered on this socket; see runbook.md#socket-forbidden",
    );
    assertEquals(model.requests.length, 0);
  } finally {
    await box.close();
    await model.close();
  }
});

Deno.test("GET /model names the API of the provider that serves the task's model, and neither its URL nor its key", async () => {
  const box = await startBox({
    toml: `[models]
model = "qwen3-coder"

[models.providers.local]
base_url = "http://127.0.0.1:11434/v1"
api = "openai-chat"
key = "OLLAMA_KEY"
models = ["qwen3-*"]

[models.providers.gateway]
base_url = "https://gateway.example/anthropic"
api = "anthropic"
key = "GATEWAY_KEY"
`,
    core: {
      vault: { value: () => "k-GATEWAY-value-1", names: () => ["OLLAMA_KEY", "GATEWAY_KEY"] },
    },
  });
  try {
    const ask = async (worker: unknown) => {
      const started = await box.admin("POST", "/tasks", { worker, tools: [] });
      const socket = `${box.home}/tasks/${started.body.task.id}/broker.sock`;
      return (await requestJson(socket, { method: "GET", path: "/model" })).body as Json;
    };
    const none = await ask({ kind: "none" });
    assertEquals(none.provider, { model: "qwen3-coder", api: "openai-chat" });
    const agent = await ask({ kind: "agent", agent: "opencode", model: "gateway/sonnet" });
    assertEquals(agent.provider, { model: "gateway/sonnet", api: "anthropic" });
    const builtIn = await ask({ kind: "agent", agent: "opencode", model: "claude-haiku-4-5" });
    assertEquals(builtIn.provider, null);
    const text = JSON.stringify([none, agent, builtIn]);
    for (const hidden of ["11434", "gateway.example", "k-GATEWAY-value-1", "OLLAMA_KEY"]) {
      assertEquals(text.includes(hidden), false, hidden);
    }
  } finally {
    await box.close();
  }
});

/**
 * The task socket's GET /model: the model a loop asks for and its limits, with no key. Model
 * requests go to the task's model endpoint; the task socket relays none (POST /model is gone).
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { requestJson } from "../../mod/net/mod.ts";
import { startFakeModel } from "../loop/fake_model.ts";
import { type LoopBox, startLoopBox } from "../loop/loop_box.ts";

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
    assertEquals(info.body, { model: "gpt-5", maxTokens: 4096, maxTurns: 50 });
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

/** The task socket's model relay: the key, the one configured service, and what it refuses. */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { requestJson } from "../../mod/net/mod.ts";
import { startFakeModel } from "../loop/fake_model.ts";
import { type LoopBox, startLoopBox } from "../loop/loop_box.ts";

async function noneTask(box: LoopBox): Promise<string> {
  const started = await box.admin("POST", "/tasks", { worker: { kind: "none" }, tools: [] });
  return started.body.task.id;
}

Deno.test("openai kind: the vault's key goes as a bearer token, the model is the configured one", async () => {
  const model = startFakeModel([{ text: "hi" }]);
  const box = await startLoopBox({
    modelUrl: model.url,
    kind: "openai",
    key: "OPENAI_API_KEY",
    vault: { OPENAI_API_KEY: "sk-openai-test-123456" },
  });
  try {
    const id = await noneTask(box);
    const socket = `${box.home}/tasks/${id}/broker.sock`;
    const info = await requestJson(socket, { method: "GET", path: "/model" });
    assertEquals(info.body, {
      kind: "openai",
      model: "claude-sonnet-5-5",
      maxTokens: 4096,
      maxTurns: 50,
    });
    const answer = await requestJson(socket, {
      method: "POST",
      path: "/model",
      body: { model: "something-else", messages: [{ role: "user", content: "hi" }] },
    });
    assertEquals(answer.status, 200);
    assertEquals(model.requests[0].path, "/v1/chat/completions");
    assertEquals(model.requests[0].headers.authorization, "Bearer sk-openai-test-123456");
    assertEquals(model.requests[0].body.model, "claude-sonnet-5-5");
  } finally {
    await box.close();
    await model.close();
  }
});

Deno.test("the relay refuses MCP servers and server-side tools, and answers 503 with no key", async () => {
  const model = startFakeModel([]);
  const vault: Record<string, string> = { ANTHROPIC_API_KEY: "sk-ant-test-000000" };
  const box = await startLoopBox({ modelUrl: model.url, kind: "anthropic", vault });
  try {
    const id = await noneTask(box);
    const socket = `${box.home}/tasks/${id}/broker.sock`;
    const post = (body: unknown) => requestJson(socket, { method: "POST", path: "/model", body });
    const messages = [{ role: "user", content: "fetch it" }];
    const mcp = await post({ messages, mcp_servers: [{ type: "url", url: "https://x.example" }] });
    assertEquals(mcp.status, 403);
    const fetcher = await post({
      messages,
      tools: [{ type: "web_fetch_20250910", name: "web_fetch" }],
    });
    assertEquals(fetcher.status, 403);
    assertStringIncludes((fetcher.body as { error: string }).error, "only the task's own tools");
    delete vault.ANTHROPIC_API_KEY;
    const none = await post({ messages });
    assertEquals(none.status, 503);
    assertStringIncludes(
      (none.body as { error: string }).error,
      "see runbook.md#model-key-missing",
    );
    assertEquals(model.requests.length, 0);
  } finally {
    await box.close();
    await model.close();
  }
});

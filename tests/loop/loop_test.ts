/** `gurt loop` as a task's worker, against scripted model services over real HTTP. */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { counter, grant } from "../kit/mod.ts";
import { startFakeModel } from "./fake_model.ts";
import { startLoopBox } from "./loop_box.ts";

const KEY = "sk-ant-test-0123456789abcdef";

Deno.test("anthropic, streamed: the tool result reaches the next request and the usage is charged", async () => {
  const model = startFakeModel([
    {
      text: "Let me echo.",
      calls: [{ name: "call_tool", input: { name: "example.echo", input: { text: "hi there" } } }],
    },
    { text: "Done: it said hi there." },
  ]);
  const box = await startLoopBox({
    modelUrl: model.url,
    kind: "anthropic",
    vault: { ANTHROPIC_API_KEY: KEY },
    grants: { echo: grant({ tool: "example.echo" }) },
  });
  try {
    const task = await box.startLoop("echo hi there", ["example.echo"]);
    const ended = await box.ended(task.id);
    assertEquals(ended.state, "done");
    assertEquals(model.requests.length, 2);
    const [first, second] = model.requests;
    assertEquals(first.path, "/v1/messages");
    assertEquals(first.body.model, "claude-sonnet-5-5");
    assertEquals(first.body.stream, true);
    assertEquals((first.body.tools as { name: string }[]).map((t) => t.name), [
      "clock",
      "find_tool",
      "call_tool",
    ]);
    assertStringIncludes(second.raw, '{\\"text\\":\\"hi there\\"}');
    assertStringIncludes(second.raw, '"tool_use_id":"toolu_1_0"');
    // Two model answers of 1000 input and 100 output tokens at 3 and 15 $/M: 1 cent each.
    const shown = (await box.admin("GET", `/tasks/${task.id}`)).body;
    const costs = shown.journal.filter((l: { type: string }) => l.type === "cost");
    assertEquals(costs.map((c: { cents: number; model: string }) => [c.cents, c.model]), [
      [1, "claude-sonnet-5-5"],
      [1, "claude-sonnet-5-5"],
    ]);
    assertEquals(ended.spentCents, 2);
  } finally {
    await box.close();
    await model.close();
  }
});

Deno.test("the model key reaches the service in x-api-key only, never the worker's env, files or requests", async () => {
  const { promise: hold, resolve: release } = Promise.withResolvers<void>();
  const model = startFakeModel([
    { calls: [{ name: "clock", input: {} }] },
    { text: "held", hold },
  ]);
  const box = await startLoopBox({
    modelUrl: model.url,
    kind: "anthropic",
    vault: { ANTHROPIC_API_KEY: KEY },
  });
  try {
    const task = await box.startLoop("what time is it", ["example.echo"]);
    await model.received(2);
    const record = JSON.parse(await Deno.readTextFile(`${box.home}/tasks/${task.id}/task.json`));
    assert(typeof record.pid === "number", "the worker's pid is in task.json");
    const environ = await Deno.readTextFile(`/proc/${record.pid}/environ`);
    assert(environ.includes("BOX_SOCKET="), "the environment was read");
    assert(!environ.includes(KEY), "the key is not in the worker's environment");
    release();
    assertEquals((await box.ended(task.id)).state, "done");
    for (const seen of model.requests) {
      assertEquals(seen.headers["x-api-key"], KEY);
      assertEquals(seen.headers.authorization, undefined);
      assert(!seen.raw.includes(KEY), "the worker's request body holds no key");
    }
    for await (const file of walk(`${box.home}/tasks/${task.id}`)) {
      const text = await Deno.readTextFile(file).catch(() => "");
      assert(!text.includes(KEY), `${file} holds no key`);
    }
  } finally {
    release();
    await box.close();
    await model.close();
  }
});

Deno.test("a worker stopped mid-task and restarted resumes its conversation without repeating a tool call", async () => {
  const { runs, tool } = counter();
  // Released only after the restart: the answer then goes to a worker that is gone.
  const { promise: hold, resolve: release } = Promise.withResolvers<void>();
  const model = startFakeModel([
    { calls: [{ name: "call_tool", input: { name: "test.count", input: { n: 1 } } }] },
    { text: "never answered", hold },
    { text: "Counted once." },
  ]);
  const box = await startLoopBox({
    modelUrl: model.url,
    kind: "anthropic",
    vault: { ANTHROPIC_API_KEY: KEY },
    grants: { count: grant({ tool: "test.count" }) },
    tools: [tool as never],
  });
  try {
    const task = await box.startLoop("count", ["test.count"]);
    await model.received(2);
    await box.restart();
    release();
    assertEquals((await box.ended(task.id)).state, "done");
    assertEquals(runs.length, 1);
    assertEquals(model.requests.length, 3);
    // The resumed request carries the whole conversation: the tool use and its result.
    assertEquals(model.requests[2].body.messages, model.requests[1].body.messages);
    assertStringIncludes(model.requests[2].raw, '{\\"runs\\":1}');
  } finally {
    release();
    await box.close();
    await model.close();
  }
});

Deno.test("with no model key in the vault, a loop task fails at once with the model-key-missing message", async () => {
  const model = startFakeModel([]);
  const box = await startLoopBox({ modelUrl: model.url, kind: "anthropic", vault: {} });
  try {
    const task = await box.startLoop("anything", ["example.echo"]);
    assertEquals(task.state, "failed");
    assertStringIncludes(task.endReason, "No model key yet. Add an Anthropic or Factory API key");
    assertStringIncludes(task.endReason, "see runbook.md#model-key-missing");
    assertEquals(model.requests.length, 0);
    const types = (await box.records()).map((r) => r.event.type);
    assertEquals(types, ["task_started", "task_ended"]);
  } finally {
    await box.close();
    await model.close();
  }
});

Deno.test("the task's own model overrides the default, and a denial is the tool result text", async () => {
  const model = startFakeModel([
    { calls: [{ name: "call_tool", input: { name: "example.spend", input: { cents: 3 } } }] },
    { text: "It was denied." },
  ]);
  const box = await startLoopBox({
    modelUrl: model.url,
    kind: "anthropic",
    vault: { ANTHROPIC_API_KEY: KEY },
  });
  try {
    const task = await box.startLoop("pay", ["example.spend"], "claude-haiku-4-5");
    assertEquals((await box.ended(task.id)).state, "done");
    assertEquals(model.requests[0].body.model, "claude-haiku-4-5");
    assertStringIncludes(model.requests[1].raw, "Denied: no grant allows this call.");
    const journal = (await box.admin("GET", `/tasks/${task.id}`)).body.journal;
    const denied = journal.find((l: { event?: string }) => l.event === "tool_denied");
    assertEquals(denied.detail, { name: "example.spend", reason: "no_grant" });
  } finally {
    await box.close();
    await model.close();
  }
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* walk(path);
    else if (entry.isFile) yield path;
  }
}

/**
 * `gurt loop` as a task's worker, against scripted model services over real HTTP: its requests go
 * through the task's model endpoint (ANTHROPIC_BASE_URL, OPENAI_BASE_URL), which puts the vault's
 * key on them.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { counter, grant } from "../kit/mod.ts";
import { startFakeModel } from "./fake_model.ts";
import { startLoopBox } from "./loop_box.ts";

const KEY = "sk-ant-test-0123456789abcdef";
const OPENAI_KEY = "sk-openai-test-fedcba9876543210";
/** The key every client inside a task holds (mod/sandbox's modelEnv). */
const PLACEHOLDER = "gurt-placeholder-key";

Deno.test("anthropic, streamed: the tool result reaches the next request and the usage is charged", async () => {
  const usage = { input: 10_000, output: 1000 };
  const model = startFakeModel([
    {
      text: "Let me echo.",
      calls: [{ name: "call_tool", input: { name: "example.echo", input: { text: "hi there" } } }],
      usage,
    },
    { text: "Done: it said hi there.", usage },
  ]);
  const box = await startLoopBox({
    modelUrl: model.url,
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
    // Two answers of 10,000 input and 1000 output tokens at 3 and 15 $/M, 4.5 cents each, charged
    // by the endpoint a whole cent at a time: 4, then 5.
    const shown = (await box.admin("GET", `/tasks/${task.id}`)).body;
    const costs = shown.journal.filter((l: { type: string }) => l.type === "cost");
    assertEquals(costs.map((c: { cents: number; model: string }) => [c.cents, c.model]), [
      [4, "claude-sonnet-5-5"],
      [5, "claude-sonnet-5-5"],
    ]);
    assertEquals(ended.spentCents, 9);
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
  const box = await startLoopBox({ modelUrl: model.url, vault: { ANTHROPIC_API_KEY: KEY } });
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
    assert(
      environ.includes(`ANTHROPIC_API_KEY=${PLACEHOLDER}`),
      "the worker holds the placeholder",
    );
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

Deno.test("with no key for its model's service in the vault, a loop task fails at once with the model-key-missing sentence naming the key", async () => {
  const model = startFakeModel([]);
  // A key for the other service does not do.
  const box = await startLoopBox({ modelUrl: model.url, vault: { OPENAI_API_KEY: OPENAI_KEY } });
  try {
    const task = await box.startLoop("anything", ["example.echo"]);
    assertEquals(task.state, "failed");
    assertStringIncludes(task.endReason, "No model key yet. Add an Anthropic or Factory API key");
    assertStringIncludes(task.endReason, "The box's vault has no ANTHROPIC_API_KEY");
    assertStringIncludes(task.endReason, "see runbook.md#model-key-missing");
    const other = await startLoopBox({ modelUrl: model.url, vault: { ANTHROPIC_API_KEY: KEY } });
    try {
      const failed = await other.startLoop("anything", ["example.echo"], "gpt-5");
      assertEquals(failed.state, "failed");
      assertStringIncludes(failed.endReason, "The box's vault has no OPENAI_API_KEY");
    } finally {
      await other.close();
    }
    assertEquals(model.requests.length, 0);
    const types = (await box.records()).map((r) => r.event.type);
    assertEquals(types, ["task_started", "task_ended"]);
  } finally {
    await box.close();
    await model.close();
  }
});

Deno.test("a key taken from the vault mid-task: the endpoint's model-key-missing sentence ends the loop, in the task's journal", async () => {
  const { promise: hold, resolve: release } = Promise.withResolvers<void>();
  const model = startFakeModel([
    { calls: [{ name: "clock", input: {} }], hold },
    { text: "never asked" },
  ]);
  const vault: Record<string, string> = { ANTHROPIC_API_KEY: KEY };
  const box = await startLoopBox({ modelUrl: model.url, vault });
  try {
    const task = await box.startLoop("what time is it", ["example.echo"]);
    await model.received(1);
    delete vault.ANTHROPIC_API_KEY;
    release();
    const ended = await box.ended(task.id);
    assertEquals(ended.state, "failed");
    assertEquals(model.requests.length, 1);
    const journal = (await box.admin("GET", `/tasks/${task.id}`)).body.journal;
    const steps = journal.filter((l: { type: string }) => l.type === "step");
    const last = steps[steps.length - 1].text as string;
    assertStringIncludes(last, "gurt loop: the model request failed: No model key yet.");
    assertStringIncludes(last, "The box's vault has no ANTHROPIC_API_KEY");
    assert(last.endsWith("see runbook.md#model-key-missing"), last);
  } finally {
    release();
    await box.close();
    await model.close();
  }
});

Deno.test("the task's own model overrides the default, and a denial is the tool result text", async () => {
  const model = startFakeModel([
    { calls: [{ name: "call_tool", input: { name: "example.spend", input: { cents: 3 } } }] },
    { text: "It was denied." },
  ]);
  const box = await startLoopBox({ modelUrl: model.url, vault: { ANTHROPIC_API_KEY: KEY } });
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

Deno.test("through the task's model endpoint, an Anthropic model's requests reach Messages with the vault's ANTHROPIC_API_KEY and the task's model", async () => {
  const model = startFakeModel([{ calls: [{ name: "clock", input: {} }] }, { text: "It is now." }]);
  const box = await startLoopBox({
    modelUrl: model.url,
    model: "gpt-5",
    vault: { ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: OPENAI_KEY },
  });
  try {
    const task = await box.startLoop("what time is it", ["example.echo"], "claude-haiku-4-5");
    assertEquals((await box.ended(task.id)).state, "done");
    assertEquals(model.requests.length, 2);
    for (const seen of model.requests) {
      assertEquals(seen.path, "/v1/messages");
      assertEquals(seen.body.model, "claude-haiku-4-5");
      assertEquals(seen.body.stream, true);
      assertEquals(seen.headers["x-api-key"], KEY);
      assertEquals(seen.headers["anthropic-version"], "2023-06-01");
      assertEquals(seen.headers.authorization, undefined);
      const all = JSON.stringify(seen.headers) + seen.raw;
      assert(!all.includes(PLACEHOLDER), "the placeholder key reached the service");
      assert(!all.includes(OPENAI_KEY), "the other service's key reached the service");
    }
  } finally {
    await box.close();
    await model.close();
  }
});

Deno.test("through the task's model endpoint, an OpenAI model's requests reach Chat Completions with the vault's OPENAI_API_KEY and the task's model", async () => {
  const model = startFakeModel([
    {
      calls: [{ name: "call_tool", input: { name: "example.echo", input: { text: "hi" } } }],
      usage: { input: 1_000_000, output: 1000 },
    },
    { text: "It said hi." },
  ]);
  const box = await startLoopBox({
    modelUrl: model.url,
    vault: { ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: OPENAI_KEY },
    grants: { echo: grant({ tool: "example.echo" }) },
  });
  try {
    const task = await box.startLoop("echo hi", ["example.echo"], "gpt-5-mini");
    const ended = await box.ended(task.id);
    assertEquals(ended.state, "done");
    assertEquals(model.requests.length, 2);
    for (const seen of model.requests) {
      assertEquals(seen.path, "/v1/chat/completions");
      assertEquals(seen.body.model, "gpt-5-mini");
      assertEquals(seen.body.stream, true);
      assertEquals(seen.body.stream_options, { include_usage: true });
      assertEquals(seen.headers.authorization, `Bearer ${OPENAI_KEY}`);
      assertEquals(seen.headers["x-api-key"], undefined);
      const all = JSON.stringify(seen.headers) + seen.raw;
      assert(!all.includes(PLACEHOLDER), "the placeholder key reached the service");
      assert(!all.includes(KEY), "the other service's key reached the service");
    }
    assertStringIncludes(model.requests[1].raw, '"role":"tool"');
    assertStringIncludes(model.requests[1].raw, '\\"text\\":\\"hi\\"');
    // gpt-5-mini at its list rates ($0.25 and $2 a million): a million input tokens, 25 cents.
    assert(ended.spentCents >= 25, `charged ${ended.spentCents} cents`);
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

/**
 * A task cannot grow the core through its model endpoint, as the core wires it: model request
 * bodies count toward the task's byte total (`[broker] max_task_bytes`) like every body on its
 * task socket, and a task has at most `[broker] max_model_requests` model requests under way at
 * once; one more is answered 429 at once, before its body is read.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startFakeModel } from "../loop/fake_model.ts";
import { endpointOf, postModel } from "./task_endpoint.ts";
import { type BoxOptions, type Json, parseResponse, sendBytes, startBox } from "../kit/mod.ts";

/** A box whose Anthropic requests go to `modelUrl`, with a key for them, and `broker` settings. */
function options(modelUrl: string, broker: string): BoxOptions {
  return {
    toml: `[models]\nanthropic_base_url = "${modelUrl}"\n[broker]\n${broker}\n`,
    core: {
      vault: {
        value: (name) => (name === "ANTHROPIC_API_KEY" ? "sk-ant-limits-test" : undefined),
        names: () => ["ANTHROPIC_API_KEY"],
      },
    },
  };
}

/** A model request whose JSON is about `bytes` long. */
function modelBody(bytes: number): Record<string, unknown> {
  return {
    model: "claude-sonnet-5-5",
    max_tokens: 16,
    messages: [{ role: "user", content: "x".repeat(bytes) }],
  };
}

/** The message of an error answer in Anthropic's format. */
function errorMessage(answer: { body: Json }): string {
  return String(answer.body?.error?.message);
}

Deno.test("model requests over max_model_requests at once are answered 429 with a sentence, without reaching the service; a slot frees when an answer ends", async () => {
  const release = Promise.withResolvers<void>();
  const model = startFakeModel([
    { text: "one", hold: release.promise },
    { text: "two", hold: release.promise },
    { text: "three" },
  ]);
  const box = await startBox(options(model.url, "max_model_requests = 2"));
  try {
    const task = await box.startTask({ tools: [] });
    const held = [postModel(task, modelBody(10)), postModel(task, modelBody(10))];
    await model.received(2);
    const over = await postModel(task, modelBody(10));
    assertEquals(over.status, 429);
    const error = errorMessage(over);
    assertStringIncludes(error, "this task already has 2 model requests under way");
    assertStringIncludes(error, "see runbook.md#model-proxy-limits");
    assertEquals(model.requests.length, 2, "the refused request never reached the service");
    release.resolve();
    assertEquals((await Promise.all(held)).map((answer) => answer.status), [200, 200]);
    assertEquals((await postModel(task, modelBody(10))).status, 200);
    assertEquals(model.requests.length, 3);
  } finally {
    release.resolve();
    await box.close();
    await model.close();
  }
});

Deno.test("model bodies count toward the task's byte total with /call bodies, either way round", async () => {
  const model = startFakeModel([{ text: "one" }, { text: "two" }]);
  const box = await startBox(options(model.url, "max_task_bytes = 100000"));
  try {
    // A model request first: a call that would take the task past its total is refused.
    const first = await box.startTask();
    assertEquals((await postModel(first, modelBody(60_000))).status, 200);
    const call = await first.request("POST", "/call", {
      tool: "example.echo",
      input: { text: "y".repeat(60_000) },
      key: "big",
    });
    assertEquals(call.status, 429, JSON.stringify(call.body));
    assertStringIncludes(call.body.error, "see runbook.md#task-write-limit");

    // A call first: a model request that would take the task past its total is refused, and
    // never reaches the service.
    const second = await box.startTask();
    const answered = await second.request("POST", "/call", {
      tool: "example.echo",
      input: { text: "y".repeat(60_000) },
      key: "big",
    });
    assertEquals(answered.status, 200);
    const refused = await postModel(second, modelBody(60_000));
    assertEquals(refused.status, 429);
    assertStringIncludes(errorMessage(refused), "see runbook.md#task-write-limit");
    assertEquals(model.requests.length, 1);
    // What is left of the total is still there for a smaller request.
    assertEquals((await postModel(second, modelBody(1_000))).status, 200);
  } finally {
    await box.close();
    await model.close();
  }
});

Deno.test("many model bodies sent at once draw on the task's total as they arrive: together they never pass it", async () => {
  const release = Promise.withResolvers<void>();
  const model = startFakeModel(Array.from({ length: 8 }, () => ({ hold: release.promise })));
  const box = await startBox(options(model.url, "max_task_bytes = 250000\nmax_model_requests = 8"));
  try {
    const task = await box.startTask({ tools: [] });
    const answers = Promise.all(
      Array.from({ length: 8 }, () => postModel(task, modelBody(100_000))),
    );
    // Two fit in the total; the rest are refused while the first two are still held.
    await model.received(2);
    release.resolve();
    const statuses = (await answers).map((answer) => answer.status).sort();
    assertEquals(statuses, [200, 200, 429, 429, 429, 429, 429, 429]);
    assert(model.requests.every((request) => request.raw.length < 100_200));
    assertEquals(model.requests.length, 2);
  } finally {
    release.resolve();
    await box.close();
    await model.close();
  }
});

/** A model request whose body is sent chunked, with no declared length, in 16 KB chunks. */
function chunkedModelRequest(body: string): Uint8Array {
  const parts = [
    "POST /v1/messages HTTP/1.1\r\nHost: box\r\nContent-Type: application/json\r\n" +
    "x-api-key: gurt-placeholder-key\r\nanthropic-version: 2023-06-01\r\n" +
    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
  ];
  for (let at = 0; at < body.length; at += 16_384) {
    const chunk = body.slice(at, at + 16_384);
    parts.push(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
  }
  parts.push("0\r\n\r\n");
  return new TextEncoder().encode(parts.join(""));
}

Deno.test("a model body sent chunked, with no length, draws on the total as it arrives; refused past it, it gives back what it took", async () => {
  const model = startFakeModel([{ text: "one" }, { text: "two" }, { text: "three" }]);
  const box = await startBox(options(model.url, "max_task_bytes = 100000"));
  try {
    const task = await box.startTask({ tools: [] });
    assertEquals((await postModel(task, modelBody(30_000))).status, 200);
    const big = JSON.stringify(modelBody(80_000));
    const refused = parseResponse(await sendBytes(endpointOf(task), chunkedModelRequest(big)));
    assertEquals(refused.status, 429, refused.text);
    assertStringIncludes(errorMessage(refused), "see runbook.md#task-write-limit");
    assertEquals(model.requests.length, 1);
    // The refused body's bytes were given back: 60 KB more still fits, chunked.
    const small = JSON.stringify(modelBody(60_000));
    const chunked = parseResponse(await sendBytes(endpointOf(task), chunkedModelRequest(small)));
    assertEquals(chunked.status, 200, chunked.text);
    assertEquals((await postModel(task, modelBody(30_000))).status, 429);
    assertEquals(model.requests.length, 2);
  } finally {
    await box.close();
    await model.close();
  }
});

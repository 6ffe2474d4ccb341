/**
 * What the endpoint cannot read as the wire format it expects, it does not pass on: a streamed answer
 * is cut off at the first event it cannot read (data that is not JSON, a delta for a block that has
 * stopped, a choice the request did not ask for), with an error event in the format's own shape
 * and nothing after it; a whole answer that is not JSON is refused (502, in the service's error
 * format). A whole JSON answer has its decoded strings redacted, escapes included. Through a real
 * core and a model service over HTTP.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { anthropicReply } from "../../mod/loop/wire_anthropic.ts";
import { openaiReply } from "../../mod/loop/wire_openai.ts";
import {
  anthropicBlocks,
  anthropicMessage,
  asAnswer,
  askModel,
  escaped,
  openaiChunks,
  openaiParts,
  readEvents,
  REDACTED,
  SECRET,
  sse,
  startEndpointBox,
  startSseService,
  textBlock,
  withEndpoint,
} from "./scripted_service.ts";
import type { TestBox } from "../kit/mod.ts";

const POINTER = "see runbook.md#model-answer-unreadable";

function assertNothingOfTheValue(box: TestBox, received: string): void {
  for (const part of [SECRET.slice(0, 8), SECRET.slice(8, 16), SECRET.slice(-8)]) {
    assert(!received.includes(part), "part of the value reached the worker");
    assert(!box.logs.join("\n").includes(part), "part of the value reached the core's log");
  }
}

Deno.test("an Anthropic event whose data is not JSON cuts the answer off there, with an error event", async () => {
  await withEndpoint("anthropic", async ({ service, box, task }) => {
    const head = anthropicMessage([textBlock(0, ["Hello. "])]).slice(0, 3); // start, block, delta
    const bad = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,` +
      `"delta":{"type":"text_delta","text":"${SECRET.slice(0, 12)}\n\n`;
    const rest = textBlock(0, [SECRET.slice(12)]).slice(1);
    service.answer({ writes: [...head, bad, ...rest] });
    const received = await (await askModel(task)).text();
    const events = readEvents(received);
    assertEquals(events.map((e) => e.event), [
      "message_start",
      "content_block_start",
      "content_block_delta",
      "error",
    ]);
    const error = JSON.parse(events[3].data);
    assertEquals(error.type, "error");
    assertStringIncludes(error.error.message, POINTER);
    assertEquals(anthropicBlocks(events)[0].text, "Hello. ");
    await assertRejects(() => anthropicReply(asAnswer(received)), Error, POINTER);
    assertNothingOfTheValue(box, received);
    assert(box.logs.some((line) => line.includes("was cut off")), box.logs.join("\n"));
  });
});

Deno.test("a delta for a block that has stopped, which gurt's worker would append, cuts the answer off", async () => {
  await withEndpoint("anthropic", async ({ service, box, task }) => {
    const writes = anthropicMessage([
      textBlock(0, [`The key: ${SECRET.slice(0, 12)}`]),
      [sse("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: SECRET.slice(12) },
      })],
    ]);
    service.answer({ writes });
    const received = await (await askModel(task)).text();
    const events = readEvents(received);
    assertEquals(events.at(-1)!.event, "error");
    assertStringIncludes(JSON.parse(events.at(-1)!.data).error.message, POINTER);
    assertNothingOfTheValue(box, received);
  });
});

Deno.test("an OpenAI chunk whose data is not JSON, or names a choice not asked for, cuts the answer off", async () => {
  await withEndpoint("openai", async ({ service, box, task }) => {
    const chunks = openaiChunks([`The key: ${SECRET.slice(0, 12)}`, SECRET.slice(12)]);
    const cases = [
      [chunks[0], chunks[1], `data: {"choices":[{"index":0,"delta":{"content":"x\n\n`, chunks[2]],
      [
        chunks[0],
        chunks[1],
        chunks[2].replace('"index":0', '"index":1'),
        ...chunks.slice(3),
      ],
    ];
    for (const writes of cases) {
      service.answer({ writes });
      const received = await (await askModel(task)).text();
      const events = readEvents(received);
      const last = JSON.parse(events.at(-1)!.data);
      assertStringIncludes(last.error.message, POINTER);
      assertEquals(openaiParts(events).text, "");
      await assertRejects(() => openaiReply(asAnswer(received)), Error, POINTER);
      assertNothingOfTheValue(box, received);
    }
  });
});

Deno.test("a whole answer that is not JSON is refused with 502 in the service's format, not passed on redacted", async () => {
  // Its text could spell a value no redaction of it sees (escapes a lenient reader decodes).
  await withEndpoint("anthropic", async ({ service, box, task }) => {
    service.answer({ type: "text/html", writes: [`<p>key: ${escaped(SECRET)}</p>`] });
    const response = await askModel(task, { stream: false });
    assertEquals(response.status, 502);
    const text = await response.text();
    const error = JSON.parse(text);
    assertEquals([error.type, error.error.type], ["error", "api_error"]);
    assertStringIncludes(error.error.message, "its body is not JSON");
    assertStringIncludes(error.error.message, POINTER);
    assert(!text.includes("\\u0073"), "the service's body reached the worker");
    assertNothingOfTheValue(box, text);
    assert(box.logs.some((line) => line.includes("was refused")), box.logs.join("\n"));
  });
});

Deno.test("a whole answer longer than 16 MiB is refused with 502 in the service's format, never read whole", async () => {
  await withEndpoint("anthropic", async ({ service, task }) => {
    // A JSON string of 17 MiB, in 1 MiB writes: the endpoint stops reading past 16.
    const mib = "x".repeat(1024 * 1024);
    const writes = ['{"type":"message","content":[{"type":"text","text":"'];
    for (let i = 0; i < 17; i++) writes.push(mib);
    writes.push('"}]}');
    service.answer({ type: "application/json", writes });
    const response = await askModel(task, { stream: false });
    assertEquals(response.status, 502);
    const text = await response.text();
    const error = JSON.parse(text).error;
    assertEquals(error.type, "api_error");
    assertStringIncludes(error.message, "answered more than 16 MiB in one whole answer");
    assertStringIncludes(error.message, "see runbook.md#model-proxy-unreachable");
  });
});

Deno.test("a whole JSON answer has its decoded strings redacted, escapes and tool arguments included", async () => {
  const anthropic = startSseService();
  const openai = startSseService();
  const a = await startEndpointBox("anthropic", anthropic);
  const o = await startEndpointBox("openai", openai);
  try {
    const message = JSON.stringify({
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: [
        { type: "text", text: `the key is ${SECRET}.` },
        { type: "tool_use", id: "toolu_1", name: "shell", input: { command: `echo ${SECRET}` } },
      ],
      usage: { input_tokens: 10, output_tokens: 5 },
    }).replaceAll(SECRET, escaped(SECRET));
    anthropic.answer({ type: "application/json", writes: [message] });
    let text = await (await askModel(a.task, { stream: false })).text();
    const reply = await anthropicReply(
      new Response(text, { headers: { "content-type": "application/json" } }),
    );
    assertEquals(reply.text, `the key is ${REDACTED}.`);
    assertEquals(reply.calls[0].input, { command: `echo ${REDACTED}` });
    assertNothingOfTheValue(a.box, text);

    // OpenAI's arguments are a string of JSON: the value escaped inside it is found too.
    const args = JSON.stringify({ command: `echo ${SECRET}` }).replace(SECRET, escaped(SECRET));
    const completion = JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion",
      choices: [{
        index: 0,
        finish_reason: "tool_calls",
        message: {
          role: "assistant",
          content: `the key is ${SECRET}`,
          tool_calls: [{
            id: "call_1",
            type: "function",
            function: { name: "shell", arguments: args },
          }],
        },
      }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }).replace(`is ${SECRET}`, `is ${escaped(SECRET)}`);
    openai.answer({ type: "application/json", writes: [completion] });
    text = await (await askModel(o.task, { stream: false })).text();
    const answer = await openaiReply(
      new Response(text, { headers: { "content-type": "application/json" } }),
    );
    assertEquals(answer.text, `the key is ${REDACTED}`);
    assertEquals(answer.calls[0].input, { command: `echo ${REDACTED}` });
    assertNothingOfTheValue(o.box, text);
  } finally {
    await a.box.close();
    await o.box.close();
    await anthropic.close();
    await openai.close();
  }
});

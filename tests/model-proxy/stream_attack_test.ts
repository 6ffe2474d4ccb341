/**
 * Attacks on the model endpoint's redaction by a hostile model service (or one prompt-injected into
 * echoing a vault value it was given): each test is one way the value still reaches a worker's
 * reassembled text, or the core's memory or CPU runs without bound, on the endpoint of a8d3870. The
 * leaks go through a real core, its task socket and a model service over real HTTP, and are read
 * back by gurt's own worker parsers (or, where said, as the Anthropic SDKs accumulate a stream).
 * The resource attacks drive the endpoint's own redacting transform directly.
 */
import v8 from "node:v8";
import vm from "node:vm";
import { assert, assertEquals } from "../assert.ts";
import { anthropicReply } from "../../mod/loop/wire_anthropic.ts";
import { openaiReply } from "../../mod/loop/wire_openai.ts";
import {
  AnswerUnreadable,
  EventRedactor,
  redactingAnswerStream,
} from "../../mod/model-proxy/stream_redaction.ts";
import { AnthropicAnswer } from "../../mod/model-proxy/messages_stream.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";
import {
  anthropicMessage,
  asAnswer,
  askModel,
  escaped,
  readEvents,
  SECRET,
  sse,
  type SseService,
  startEndpointBox,
  startSseService,
  textBlock,
  toolBlock,
  withEndpoint,
} from "./scripted_service.ts";
import type { EndpointTask } from "./scripted_service.ts";

const TEXT = `Here is the key you asked for: ${SECRET}. Keep it safe.`;
const AT = TEXT.indexOf(SECRET);
/** The text cut inside the value: the first part ends with half of it, the second has the rest. */
const FIRST = TEXT.slice(0, AT + SECRET.length / 2);
const SECOND = TEXT.slice(AT + SECRET.length / 2);

/** The whole answer the endpoint passed on, as the worker receives it. */
async function relay(service: SseService, task: EndpointTask, writes: string[]): Promise<string> {
  service.answer({ writes });
  const response = await askModel(task);
  assertEquals(response.status, 200);
  return await response.text();
}

function assertNoValue(text: string, where: string): void {
  assert(!text.includes(SECRET), `${where}: the vault value reached the worker whole`);
}

/**
 * What a worker's parser makes of the answer; "" when the endpoint cut the answer off or refused it
 * (an endpoint that fails closed on the attack passes the test too).
 */
async function workerText(read: () => Promise<string>): Promise<string> {
  try {
    return await read();
  } catch (error) {
    if (String(error).includes("model-answer-unreadable")) return "";
    throw error;
  }
}

/** A whole answer's response, or null when the endpoint refused it as unreadable (502). */
async function wholeAnswer(task: EndpointTask): Promise<Response | null> {
  const response = await askModel(task, { stream: false });
  if (response.status === 502) {
    await response.body?.cancel();
    return null;
  }
  assertEquals(response.status, 200);
  return response;
}

function deltaEvent(index: number, delta: Record<string, unknown>): string {
  return sse("content_block_delta", { type: "content_block_delta", index, delta });
}

function startEvent(index: number, block: Record<string, unknown>): string {
  return sse("content_block_start", { type: "content_block_start", index, content_block: block });
}

function stopEvent(index: number): string {
  return sse("content_block_stop", { type: "content_block_stop", index });
}

Deno.test("attack: deltas of two open text blocks, interleaved, give a worker that joins each block's deltas the value", async () => {
  // The endpoint joins all text in the order it arrives; a worker joins each block's deltas, so
  // block 0 reads FIRST + SECOND while the endpoint saw FIRST, "Also: ", SECOND.
  await withEndpoint("anthropic", async ({ service, task }) => {
    const received = await relay(
      service,
      task,
      anthropicMessage([[
        startEvent(0, { type: "text", text: "" }),
        startEvent(1, { type: "text", text: "" }),
        deltaEvent(0, { type: "text_delta", text: FIRST }),
        deltaEvent(1, { type: "text_delta", text: "Also: " }),
        deltaEvent(0, { type: "text_delta", text: SECOND }),
        stopEvent(0),
        stopEvent(1),
      ]]),
    );
    const text = await workerText(async () => (await anthropicReply(asAnswer(received))).text);
    assertNoValue(text, "gurt's worker");
  });
});

Deno.test("attack: text blocks sent out of index order give gurt's worker, which joins blocks by index, the value", async () => {
  // Block 1 (the value's end) is sent whole before block 0 (its start): the endpoint's text stream
  // is SECOND + FIRST, the worker's text is FIRST + SECOND.
  await withEndpoint("anthropic", async ({ service, task }) => {
    const received = await relay(
      service,
      task,
      anthropicMessage([textBlock(1, [SECOND]), textBlock(0, [FIRST])]),
    );
    const text = await workerText(async () => (await anthropicReply(asAnswer(received))).text);
    assertNoValue(text, "gurt's worker");
  });
});

Deno.test("attack: a text_delta on a tool_use block, between two text blocks, breaks the endpoint's text stream but not the worker's", async () => {
  // The endpoint puts every text_delta in the message's one text stream, whatever the block's type;
  // gurt's worker (and the SDKs) drop text of a tool_use block, so blocks 0 and 2 join whole.
  await withEndpoint("anthropic", async ({ service, task }) => {
    const received = await relay(
      service,
      task,
      anthropicMessage([
        textBlock(0, [FIRST]),
        [
          startEvent(1, { type: "tool_use", id: "toolu_1", name: "shell", input: {} }),
          deltaEvent(1, { type: "text_delta", text: "x" }),
          deltaEvent(1, { type: "input_json_delta", partial_json: "{}" }),
          stopEvent(1),
        ],
        textBlock(2, [SECOND]),
      ]),
    );
    const text = await workerText(async () => (await anthropicReply(asAnswer(received))).text);
    assertNoValue(text, "gurt's worker");
  });
});

/**
 * A message put together as Anthropic's SDKs do (Python's accumulate_event, TypeScript's
 * MessageStream): message_start's message is the snapshot, content_block_start appends a block
 * whatever its index, a delta goes to content[index].
 */
// deno-lint-ignore no-explicit-any
function sdkMessage(text: string): any {
  // deno-lint-ignore no-explicit-any
  let snapshot: any = null;
  for (const { data } of readEvents(text)) {
    const event = JSON.parse(data);
    if (event.type === "message_start") snapshot = event.message;
    else if (event.type === "content_block_start") snapshot.content.push(event.content_block);
    else if (event.type === "content_block_delta") {
      const block = snapshot.content[event.index];
      if (event.delta.type === "text_delta" && block.type === "text") {
        block.text += event.delta.text;
      }
    }
  }
  return snapshot;
}

Deno.test("attack: a text block inside message_start's message gets the next deltas in Anthropic's SDKs, joined to the value", async () => {
  // message_start's strings are redacted one by one, not as part of the text stream; the SDKs keep
  // its content and send deltas at index 0 to it, so content[0].text is FIRST + SECOND.
  await withEndpoint("anthropic", async ({ service, task }) => {
    const writes = anthropicMessage([textBlock(0, [SECOND])]);
    const start = JSON.parse(readEvents(writes[0])[0].data);
    start.message.content = [{ type: "text", text: FIRST }];
    writes[0] = sse("message_start", start);
    const received = await relay(service, task, writes);
    const message = sdkMessage(received);
    assertNoValue(message.content[0].text, "the SDK's message");
  });
});

Deno.test("attack: a whole (not streamed) Anthropic answer with the value split over two text blocks, which gurt's worker joins", async () => {
  // Redacting each decoded string on its own misses it: gurt's worker joins the text blocks.
  await withEndpoint("anthropic", async ({ service, task }) => {
    service.answer({
      type: "application/json",
      writes: [JSON.stringify({
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-5-5",
        content: [{ type: "text", text: FIRST }, { type: "text", text: SECOND }],
        stop_reason: "end_turn",
        usage: { input_tokens: 10, output_tokens: 5 },
      })],
    });
    const response = await wholeAnswer(task);
    if (response !== null) assertNoValue((await anthropicReply(response)).text, "gurt's worker");
  });
});

Deno.test("attack: two entries for choice 0 in one OpenAI chunk; gurt's worker reads only choices[0] and joins the value", async () => {
  // The endpoint feeds both entries to choice 0's content stream (FIRST, "x", SECOND); gurt's worker
  // (and every client written as chunk.choices[0].delta.content) reads only the first entry.
  await withEndpoint("openai", async ({ service, task }) => {
    const chunk = (choices: unknown[]) =>
      sse(undefined, { id: "chatcmpl-1", object: "chat.completion.chunk", choices });
    const received = await relay(service, task, [
      chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
      chunk([
        { index: 0, delta: { content: FIRST }, finish_reason: null },
        { index: 0, delta: { content: "x" }, finish_reason: null },
      ]),
      chunk([{ index: 0, delta: { content: SECOND }, finish_reason: null }]),
      chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
      sse(undefined, "[DONE]"),
    ]);
    const text = await workerText(async () => (await openaiReply(asAnswer(received))).text);
    assertNoValue(text, "gurt's worker");
  });
});

Deno.test("attack: a whole OpenAI answer whose tool arguments are a JSON string spelling the value in \\u escapes", async () => {
  // Redacting the arguments as their raw text misses it: the worker's JSON.parse of a top-level
  // JSON string decodes the escapes to the value.
  await withEndpoint("openai", async ({ service, task }) => {
    service.answer({
      type: "application/json",
      writes: [JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion",
        model: "gpt-test",
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: null,
            tool_calls: [{
              id: "call_1",
              type: "function",
              function: { name: "shell", arguments: `"${escaped(SECRET)}"` },
            }],
          },
          finish_reason: "tool_calls",
        }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      })],
    });
    const response = await wholeAnswer(task);
    if (response !== null) {
      const input = (await openaiReply(response)).calls[0]?.input ?? null;
      assert(input !== SECRET, "gurt's worker's tool input is the vault value");
      assertNoValue(JSON.stringify(input), "gurt's worker's tool input");
    }
  });
});

Deno.test("attack: a vault value with spaces, as bare words outside JSON strings over two input_json_delta events, reaches the worker as unparsed input", async () => {
  // The JSON lexer redacts each bare token on its own and passes spaces as structure; the last
  // check sees one event at a time. The joined input is not JSON, so gurt's worker keeps its text.
  const service = startSseService();
  const { box, task } = await startEndpointBox("anthropic", service);
  const phrase = "correct horse battery staple";
  try {
    const set = await box.admin("PUT", "/api/vault/DB_PASSWORD", { value: phrase });
    assert(set.status === 200, JSON.stringify(set.body));
    const received = await relay(
      service,
      task,
      anthropicMessage([toolBlock(0, "shell", ["correct horse", " battery staple"])]),
    );
    const input = await workerText(async () =>
      JSON.stringify((await anthropicReply(asAnswer(received))).calls[0]?.input ?? null)
    );
    assert(!input.includes(phrase), `the vault value reached gurt's worker: ${input.length} chars`);
  } finally {
    await box.close();
    await service.close();
  }
});

const redaction = answerRedaction(Redactor.forValues([SECRET]));

Deno.test("attack: an OpenAI answer that opens ever more tool calls grows the core's memory without bound", async () => {
  // Every tool call index gets its own name and arguments streams, kept until the answer ends;
  // nothing of it counts toward the 8 MiB the endpoint holds at most. Each event passes at once.
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  const stream = redactingAnswerStream(redaction, { kind: "openai", choices: 1, cut: () => {} });
  const writer = stream.writable.getWriter();
  const reading = (async () => {
    for await (const _ of stream.readable) { /* the worker reads every event */ }
  })();
  const encoder = new TextEncoder();
  gc();
  const before = Deno.memoryUsage().heapUsed;
  const calls = 150_000;
  let sent = 0;
  for (let first = 0; first < calls; first += 100) {
    const batch = [];
    for (let index = first; index < first + 100; index++) {
      batch.push({ index, function: { name: "a", arguments: "{" } });
    }
    const data = JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: batch } }] });
    sent += data.length;
    // A relay that cuts such an answer off ends its stream: the writes stop there.
    const written = await writer.write(encoder.encode(`data: ${data}\n\n`)).then(
      () => true,
      () => false,
    );
    if (!written) break;
  }
  gc();
  const grown = Deno.memoryUsage().heapUsed - before;
  await writer.close().catch(() => {});
  await reading.catch(() => {});
  const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
  assert(
    grown < 24 * 1024 * 1024,
    `the endpoint kept ${mib(grown)} MiB for one answer of ${mib(sent)} MiB, all of it passed on`,
  );
});

Deno.test("attack: a streamed answer with no line end costs the endpoint time quadratic in its length", () => {
  // Each chunk is appended to the line being read and the whole line is searched again for its
  // end: 8 MiB in 8 KiB chunks is a thousand searches of up to 8 MiB before the cut.
  const events = new EventRedactor(new AnthropicAnswer(redaction), redaction);
  const chunk = "x".repeat(8 * 1024);
  const started = performance.now();
  let cut = false;
  let pushed = 0;
  while (performance.now() - started < 10_000) {
    try {
      events.push(chunk);
      pushed += chunk.length;
    } catch (error) {
      assert(error instanceof AnswerUnreadable);
      cut = true;
      break;
    }
  }
  const seconds = (performance.now() - started) / 1000;
  assert(
    cut && seconds < 3,
    `after ${seconds.toFixed(1)} s the endpoint had read ${
      (pushed / 1024 / 1024).toFixed(1)
    } MiB of one line and ${cut ? "cut it off" : "was still reading"}`,
  );
});

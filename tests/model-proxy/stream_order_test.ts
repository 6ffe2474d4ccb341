/**
 * The endpoint reads a streamed answer as strictly as the services write it, and cuts it off at the
 * first event that breaks that order, since a worker could join such an event's text in a way the
 * relay did not read it: Anthropic blocks one at a time in index order, each delta of a type its
 * block takes, message_start with no content yet (content there is dropped); OpenAI chunks with one
 * entry per choice. The ordinary answers of the other relay tests pass; each case here differs
 * from one of them by the one event named. Drives the endpoint's own event redactor.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { AnswerUnreadable, EventRedactor } from "../../mod/model-proxy/stream_redaction.ts";
import { AnthropicAnswer } from "../../mod/model-proxy/messages_stream.ts";
import { MOST_PARTS, OpenAIAnswer } from "../../mod/model-proxy/chat_stream.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";
import {
  anthropicMessage,
  openaiChunks,
  readEvents,
  SECRET,
  sse,
  textBlock,
  thinkingBlock,
  toolBlock,
} from "./scripted_service.ts";

/** The vault: SECRET, and a value of digits that a number can spell. */
const redaction = answerRedaction(Redactor.forValues([SECRET, "12345678"]));

/** What the endpoint passes on of `writes`, and why it cut the answer off (null when it did not). */
function relay(
  kind: "anthropic" | "openai",
  writes: string[],
): { out: string; cut: string | null } {
  const format = kind === "anthropic"
    ? new AnthropicAnswer(redaction)
    : new OpenAIAnswer(redaction, 1);
  const events = new EventRedactor(format, redaction);
  let out = "";
  try {
    for (const write of writes) out += events.push(write);
    out += events.end();
    return { out, cut: null };
  } catch (error) {
    if (!(error instanceof AnswerUnreadable)) throw error;
    return { out: out + events.sendable(), cut: error.message };
  }
}

function start(index: number, block: Record<string, unknown>): string {
  return sse("content_block_start", { type: "content_block_start", index, content_block: block });
}

function delta(index: number, body: Record<string, unknown>): string {
  return sse("content_block_delta", { type: "content_block_delta", index, delta: body });
}

function stop(index: number): string {
  return sse("content_block_stop", { type: "content_block_stop", index });
}

const TOOL = { type: "tool_use", id: "toolu_1", name: "shell", input: {} };

Deno.test("an ordinary Anthropic answer with thinking, text and tool blocks is passed on whole, byte for byte", () => {
  const writes = anthropicMessage([
    thinkingBlock(0, ["Thinking. "]),
    textBlock(1, ["Hello, ", "world."]),
    toolBlock(2, "shell", ['{"command": ', '"ls"}']),
  ]);
  writes.splice(1, 0, sse("ping", { type: "ping" }));
  assertEquals(relay("anthropic", writes), { out: writes.join(""), cut: null });
});

const anthropicCuts: [string, string[][], string][] = [
  [
    "a block started while another is open",
    [[start(0, { type: "text", text: "" }), start(1, { type: "text", text: "" })]],
    "while block 0 is still open",
  ],
  ["a first block that is not block 0", [textBlock(1, ["Hello."])], "out of order"],
  ["a block that skips an index", [textBlock(0, ["a"]), textBlock(2, ["b"])], "out of order"],
  ["a block index sent twice", [textBlock(0, ["a"]), textBlock(0, ["b"])], "out of order"],
  [
    "a delta for a block other than the open one",
    [[start(0, { type: "text", text: "" }), delta(1, { type: "text_delta", text: "x" })]],
    "not the one open",
  ],
  ["a delta after its block stopped", [textBlock(0, ["a"]), [
    delta(0, { type: "text_delta", text: "b" }),
  ]], "not the one open"],
  ["a block stopped twice", [textBlock(0, ["a"]), [stop(0)]], "not the one open"],
  [
    "a delta with no index",
    [[
      start(0, { type: "text", text: "" }),
      sse("content_block_delta", {
        type: "content_block_delta",
        delta: { type: "text_delta", text: "x" },
      }),
    ]],
    "not the one open",
  ],
  [
    "a text_delta on a tool_use block",
    [[start(0, TOOL), delta(0, { type: "text_delta", text: "x" })]],
    "of type text_delta for a tool_use block",
  ],
  [
    "an input_json_delta on a text block",
    [[
      start(0, { type: "text", text: "" }),
      delta(0, { type: "input_json_delta", partial_json: "{}" }),
    ]],
    "of type input_json_delta for a text block",
  ],
  [
    "a thinking_delta on a text block",
    [[start(0, { type: "text", text: "" }), delta(0, { type: "thinking_delta", thinking: "x" })]],
    "of type thinking_delta for a text block",
  ],
  [
    "a delta of a type gurt does not know",
    [[start(0, { type: "text", text: "" }), delta(0, { type: `${SECRET}_delta`, text: "x" })]],
    "of a type gurt does not know for a text block",
  ],
  [
    "a delta on a block of a type that takes none",
    [[
      start(0, { type: "redacted_thinking", data: "abc" }),
      delta(0, { type: "text_delta", text: "x" }),
    ]],
    "for a block that takes none",
  ],
  [
    "a tool_use block whose id is a number",
    [[start(0, { ...TOOL, id: 12345678 })]],
    "a tool_use block has no string id",
  ],
  [
    "a tool input number that a worker writes as a vault value",
    [toolBlock(0, "shell", ['{"n": 1.23456', "78e7}"])],
    "a number spells a vault value",
  ],
  [
    "a tool input number too long to check",
    [toolBlock(0, "shell", ['{"n": 1.', "0".repeat(500), "}"])],
    "a number of more than 400 characters",
  ],
  [
    "message_delta while a block is open",
    [[start(0, { type: "text", text: "" })]],
    "message_delta while block 0 is still open",
  ],
];

for (const [what, blocks, reason] of anthropicCuts) {
  Deno.test(`an Anthropic answer with ${what} is cut off there`, () => {
    const writes = anthropicMessage(blocks);
    const { out, cut } = relay("anthropic", writes);
    assert(cut !== null, "the answer was passed on whole");
    assertStringIncludes(cut, reason);
    assert(!cut.includes(SECRET), "the reason quotes the answer");
    assert(writes.join("").startsWith(out), "what went before the cut is not the answer's start");
  });
}

Deno.test("an Anthropic event after message_stop, or a second message_start, cuts the answer off", () => {
  const writes = anthropicMessage([textBlock(0, ["Hello."])]);
  let result = relay("anthropic", [...writes, sse("ping", { type: "ping" })]);
  assertEquals(result.cut, "an event after message_stop");
  assertEquals(result.out, writes.join(""));
  result = relay("anthropic", [writes[0], ...writes]);
  assertEquals(result.cut, "a second message_start");
});

Deno.test("content in message_start's message is dropped, the rest of the event passed on", () => {
  const writes = anthropicMessage([textBlock(0, ["Hello."])]);
  const first = JSON.parse(readEvents(writes[0])[0].data);
  first.message.content = [{ type: "text", text: `${SECRET.slice(0, 10)}` }];
  writes[0] = sse("message_start", first);
  const { out, cut } = relay("anthropic", writes);
  assertEquals(cut, null);
  const events = readEvents(out);
  const message = JSON.parse(events[0].data).message;
  assertEquals(message.content, []);
  assertEquals(message.id, "msg_1");
  assertEquals(events.length, readEvents(writes.join("")).length);
});

Deno.test("an ordinary OpenAI answer is passed on whole, byte for byte", () => {
  const writes = openaiChunks(["Hello, ", "world."], [{
    name: "shell",
    arguments: ['{"a":', "1}"],
  }]);
  assertEquals(relay("openai", writes), { out: writes.join(""), cut: null });
});

/** One OpenAI chunk with these choice entries. */
function chunk(choices: unknown[]): string {
  return sse(undefined, { id: "chatcmpl-1", object: "chat.completion.chunk", choices });
}

Deno.test("an OpenAI chunk with two entries for one choice is cut off there", () => {
  const writes = openaiChunks(["Hello."]);
  writes.splice(
    2,
    0,
    chunk([
      { index: 0, delta: { content: "a" }, finish_reason: null },
      { index: 0, delta: { content: "b" }, finish_reason: null },
    ]),
  );
  const { out, cut } = relay("openai", writes);
  assertEquals(cut, "a chunk with two entries for choice 0");
  assertEquals(out, writes.slice(0, 2).join(""));
});

Deno.test(`an OpenAI answer may open ${MOST_PARTS} choices and tool calls, and is cut off at one more`, () => {
  const calls = (from: number, to: number) => {
    const batch = [];
    for (let index = from; index < to; index++) {
      batch.push({ index, id: `call_${index}`, function: { name: "a", arguments: "{}" } });
    }
    return chunk([{ index: 0, delta: { tool_calls: batch }, finish_reason: null }]);
  };
  // The choice is one part, so MOST_PARTS - 1 tool calls fill the answer.
  const full = [calls(0, 500), calls(500, MOST_PARTS - 1), sse(undefined, "[DONE]")];
  assertEquals(relay("openai", full), { out: full.join(""), cut: null });
  const over = [calls(0, 500), calls(500, MOST_PARTS), sse(undefined, "[DONE]")];
  const { out, cut } = relay("openai", over);
  assertEquals(cut, `more than ${MOST_PARTS} choices and tool calls in one answer`);
  assertEquals(out, over[0]);
});

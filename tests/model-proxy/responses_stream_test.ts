/**
 * The Responses API's streamed events, read for redaction: the texts a client joins are read as
 * one stream, and what breaks the order the service writes in, or joins what the endpoint did not
 * read as one, ends the answer.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { EventRedactor } from "../../mod/model-proxy/stream_redaction.ts";
import { ResponsesAnswer } from "../../mod/model-proxy/responses_stream.ts";
import { AnswerUnreadable } from "../../mod/model-proxy/json_text_stream.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";

const SECRET = "sk-responses-canary-9e8d7c";
const redaction = answerRedaction(Redactor.forValues([SECRET]));

function event(fields: Record<string, unknown>): string {
  return `event: ${fields.type}\ndata: ${JSON.stringify(fields)}\n\n`;
}

const START = [
  event({ type: "response.created", response: { id: "resp_1", output: [] } }),
  event({
    type: "response.output_item.added",
    output_index: 0,
    item: { type: "message", id: "msg_1", content: [] },
  }),
  event({
    type: "response.content_part.added",
    item_id: "msg_1",
    output_index: 0,
    content_index: 0,
    part: { type: "output_text", text: "" },
  }),
];

function delta(text: string, at: Record<string, unknown> = {}): string {
  return event({
    type: "response.output_text.delta",
    item_id: "msg_1",
    output_index: 0,
    content_index: 0,
    delta: text,
    ...at,
  });
}

/** What the redactor passes on for these events, or the reason it cut them off. */
function read(events: string[]): { out: string; cut: string | null } {
  const redactor = new EventRedactor(new ResponsesAnswer(redaction), redaction);
  let out = "";
  try {
    for (const e of events) out += redactor.push(e);
    out += redactor.end();
  } catch (error) {
    if (!(error instanceof AnswerUnreadable)) throw error;
    return { out: out + redactor.sendable(), cut: error.message };
  }
  return { out, cut: null };
}

Deno.test("a value split across two output_text deltas becomes the marker in the first", () => {
  const { out, cut } = read([
    ...START,
    delta(`a ${SECRET.slice(0, 9)}`),
    delta(`${SECRET.slice(9)} b`),
  ]);
  assertEquals(cut, null);
  assertStringIncludes(out, '"delta":"a [a vault key]"');
  assertStringIncludes(out, '"delta":" b"');
});

Deno.test("a delta for an item or part that is not the open one ends the answer", () => {
  assertEquals(
    read([...START, delta("x", { output_index: 1 })]).cut,
    "a response.output_text.delta for an item that is not the one open",
  );
  assertEquals(
    read([...START, delta("x", { item_id: "msg_2" })]).cut,
    "a response.output_text.delta for an item that is not the one open",
  );
  assertEquals(
    read([...START, delta("x", { content_index: 1 })]).cut,
    "a response.output_text.delta for a part that is not the one open",
  );
});

Deno.test("a delta of a type gurt does not know ends the answer", () => {
  const { cut } = read([...START, event({ type: "response.audio.transcript.delta", delta: "x" })]);
  assertEquals(cut, "a delta event of a type gurt does not know");
});

Deno.test("a final output whose parts spell a value only when joined ends the answer", () => {
  const parts = [SECRET.slice(0, 9), SECRET.slice(9)].map((text) => ({
    type: "output_text",
    text,
  }));
  const { cut, out } = read([
    START[0],
    event({
      type: "response.completed",
      response: { output: [{ type: "message", id: "msg_1", content: parts }] },
    }),
  ]);
  assertEquals(cut, "an event's texts spell a vault value once joined");
  assert(!out.includes(SECRET.slice(9)));
});

Deno.test("output in response.created is dropped, and items come in order", () => {
  const created = event({
    type: "response.created",
    response: { output: [{ type: "message", content: [{ type: "output_text", text: "x" }] }] },
  });
  assertStringIncludes(read([created]).out, '"output":[]');
  assertEquals(
    read([
      START[0],
      event({ type: "response.output_item.added", output_index: 1, item: { type: "message" } }),
    ]).cut,
    "a response.output_item.added out of order (item 0 was next)",
  );
});

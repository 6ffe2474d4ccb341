/**
 * A whole (not streamed) model answer is redacted as gurt's worker reads it: an Anthropic
 * message's text blocks as one text (a value cut between two blocks, at any of its characters,
 * reaches the worker as one `[a vault key]`, each block keeping its place), a tool call's arguments
 * decoded as JSON whatever JSON value they hold, and an answer is refused where a worker would read
 * as text what is not a string, or where a value is left that cannot be replaced. Drives the
 * endpoint's own whole-answer redaction; the answers are read back by gurt's worker parsers.
 */
import { assertEquals, assertThrows } from "../assert.ts";
import { anthropicReply } from "../../mod/loop/wire_anthropic.ts";
import { openaiReply } from "../../mod/loop/wire_openai.ts";
import { AnswerUnreadable } from "../../mod/model-proxy/stream_redaction.ts";
import { redactWholeAnswer } from "../../mod/model-proxy/whole_redaction.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";
import { escaped, REDACTED, SECRET } from "./scripted_service.ts";

const redaction = answerRedaction(Redactor.forValues([SECRET, "12345678"]));
const TEXT = `Here is the key you asked for: ${SECRET}. Keep it safe.`;
const EXPECTED = TEXT.replaceAll(SECRET, REDACTED);

function message(content: unknown[]): string {
  return JSON.stringify({
    id: "msg_1",
    type: "message",
    role: "assistant",
    content,
    stop_reason: "end_turn",
    usage: { input_tokens: 10, output_tokens: 5 },
  });
}

function completion(fn: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: fn, ...extra }],
      },
      finish_reason: "tool_calls",
    }],
  });
}

function asJson(text: string): Response {
  return new Response(text, { headers: { "content-type": "application/json" } });
}

Deno.test("a vault value split over two Anthropic text blocks, at any of its characters, reaches the worker as one [a vault key]", async () => {
  const at = TEXT.indexOf(SECRET);
  for (let cut = 1; cut < SECRET.length; cut++) {
    for (const between of [[], [{ type: "tool_use", id: "toolu_1", name: "shell", input: {} }]]) {
      const out = redactWholeAnswer(
        message([
          { type: "text", text: TEXT.slice(0, at + cut) },
          ...between,
          { type: "text", text: TEXT.slice(at + cut) },
        ]),
        { redaction, kind: "anthropic" },
      );
      const content = JSON.parse(out).content;
      assertEquals(content[0].text, TEXT.slice(0, at) + REDACTED, `cut ${cut}`);
      assertEquals(content.length, 2 + between.length);
      assertEquals((await anthropicReply(asJson(out))).text, EXPECTED, `cut ${cut}`);
    }
  }
});

Deno.test("an ordinary whole answer of either format is passed on byte for byte", () => {
  const anthropic = message([
    { type: "text", text: `The prefix ${SECRET.slice(0, 12)}` },
    { type: "text", text: "dle is not a key." },
    { type: "tool_use", id: "toolu_1", name: "shell", input: { command: "ls" } },
  ]);
  assertEquals(
    redactWholeAnswer(anthropic, { redaction, kind: "anthropic" }),
    anthropic,
  );
  const openai = completion({ name: "shell", arguments: '{"command": "ls", "n": "caf\\u00e9"}' });
  assertEquals(redactWholeAnswer(openai, { redaction, kind: "openai" }), openai);
});

Deno.test("a tool call's arguments are decoded as JSON whatever value they hold, a top-level string included", async () => {
  for (const args of [`"${escaped(SECRET)}"`, `["${escaped(SECRET)}"]`, ` "x${escaped(SECRET)}"`]) {
    const out = redactWholeAnswer(completion({ name: "shell", arguments: args }), {
      redaction,
      kind: "openai",
    });
    const input = (await openaiReply(asJson(out))).calls[0].input;
    assertEquals(JSON.stringify(input).includes(REDACTED), true, args);
    assertEquals(JSON.stringify(input).includes(SECRET), false, args);
  }
  // A number the worker's JSON.parse writes again as the value: refused.
  for (const args of ["1.2345678e7", "[12345678.0]", "12345678000000000000001e-15"]) {
    assertThrows(
      () =>
        redactWholeAnswer(completion({ name: "shell", arguments: args }), {
          redaction,
          kind: "openai",
        }),
      AnswerUnreadable,
    );
  }
  // Not JSON: kept as it is by the worker, so redacted as it is.
  const out = redactWholeAnswer(completion({ name: "shell", arguments: `run ${SECRET} now` }), {
    redaction,
    kind: "openai",
  });
  assertEquals((await openaiReply(asJson(out))).calls[0].input, {
    unparsed: `run ${REDACTED} now`,
  });
});

Deno.test("a whole answer is refused where a worker reads as text what is not a string, or a value cannot be replaced", () => {
  const refused: [string, string, "anthropic" | "openai"][] = [
    ["not JSON", `<p>${SECRET}</p>`, "anthropic"],
    ["a text block's text a number", message([{ type: "text", text: 1234 }]), "anthropic"],
    [
      "a tool_use block's name a number",
      message([{ type: "tool_use", id: "toolu_1", name: 1.2345678e7, input: {} }]),
      "anthropic",
    ],
    ["a function's name a number", completion({ name: 1.2345678e7, arguments: "{}" }), "openai"],
    ["a function's arguments an object", completion({ name: "a", arguments: {} }), "openai"],
    ["a tool call's id a number", completion({ name: "a" }, { id: 12345678 }), "openai"],
    ["a value in a number", message([{ type: "text", text: "a", n: 12345678 }]), "anthropic"],
    [
      "a value in a number written with an exponent",
      message([{ type: "tool_use", id: "t", name: "a", input: { n: 7 } }]).replace(
        '"n":7',
        '"n":1.2345678e7',
      ),
      "anthropic",
    ],
  ];
  for (const [what, text, kind] of refused) {
    const error = assertThrows(
      () => redactWholeAnswer(text, { redaction, kind }),
      AnswerUnreadable,
    );
    assertEquals(error.message.includes(SECRET), false, what);
  }
});

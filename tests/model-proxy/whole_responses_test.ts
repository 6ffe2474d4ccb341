/**
 * A whole (not streamed) OpenAI Responses answer is redacted as a client reads it: the texts a
 * client joins across the output (every message's output_text, which the SDK's `output_text` joins,
 * and likewise the refusals, reasoning summaries and reasoning texts) each as one text, a function
 * call's `arguments` decoded as JSON; and it is refused where a client would read as text what is
 * not a string. Drives mod/model-proxy/whole_redaction.ts directly.
 */
import { assertEquals, assertThrows } from "../assert.ts";
import { AnswerUnreadable } from "../../mod/model-proxy/stream_redaction.ts";
import { redactWholeAnswer } from "../../mod/model-proxy/whole_redaction.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";
import { escaped, REDACTED, SECRET } from "./scripted_service.ts";

const redaction = answerRedaction(Redactor.forValues([SECRET, "12345678"]));
const TEXT = `Here is the key you asked for: ${SECRET}. Keep it safe.`;
const AT = TEXT.indexOf(SECRET);

function response(output: unknown[]): string {
  return JSON.stringify({
    id: "resp_1",
    object: "response",
    status: "completed",
    model: "gpt-5",
    output,
    usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
  });
}

function message(id: string, parts: unknown[]): Record<string, unknown> {
  return { type: "message", id, status: "completed", role: "assistant", content: parts };
}

function outputText(text: unknown): Record<string, unknown> {
  return { type: "output_text", text, annotations: [] };
}

function call(fields: Record<string, unknown>): Record<string, unknown> {
  return { type: "function_call", id: "fc_1", call_id: "call_1", status: "completed", ...fields };
}

/** The SDK's `output_text`: every message's output_text parts, joined. */
function sdkOutputText(out: string): string {
  const texts: string[] = [];
  for (const item of JSON.parse(out).output) {
    if (item.type !== "message") continue;
    for (const part of item.content) if (part.type === "output_text") texts.push(part.text);
  }
  return texts.join("");
}

Deno.test("a vault value split over two messages' output_text, at any of its characters, reaches the SDK's output_text as one [a vault key]", () => {
  for (let cut = 1; cut < SECRET.length; cut++) {
    const between = cut % 2 === 0 ? [call({ name: "shell", arguments: "{}" })] : [];
    const out = redactWholeAnswer(
      response([
        message("msg_1", [outputText(TEXT.slice(0, AT + cut))]),
        ...between,
        message("msg_2", [outputText(TEXT.slice(AT + cut))]),
      ]),
      { redaction, kind: "responses" },
    );
    assertEquals(sdkOutputText(out), TEXT.replace(SECRET, REDACTED), `cut ${cut}`);
    const output = JSON.parse(out).output;
    assertEquals(output[0].content[0].text, TEXT.slice(0, AT) + REDACTED, `cut ${cut}`);
    assertEquals(output.length, 2 + between.length);
  }
});

Deno.test("a vault value split over two reasoning summaries, or two refusals, reaches the client as one [a vault key]", () => {
  const half = AT + SECRET.length / 2;
  const reasoning = {
    type: "reasoning",
    id: "rs_1",
    summary: [
      { type: "summary_text", text: TEXT.slice(0, half) },
      { type: "summary_text", text: TEXT.slice(half) },
    ],
  };
  let out = JSON.parse(redactWholeAnswer(response([reasoning]), { redaction, kind: "responses" }));
  assertEquals(
    out.output[0].summary.map((part: { text: string }) => part.text).join(""),
    TEXT.replace(SECRET, REDACTED),
  );
  const refusal = (text: string) => ({ type: "refusal", refusal: text });
  out = JSON.parse(redactWholeAnswer(
    response([message("msg_1", [refusal(TEXT.slice(0, half)), refusal(TEXT.slice(half))])]),
    { redaction, kind: "responses" },
  ));
  assertEquals(
    out.output[0].content.map((part: { refusal: string }) => part.refusal).join(""),
    TEXT.replace(SECRET, REDACTED),
  );
});

Deno.test("a function call's arguments are decoded as JSON, a top-level string spelled in \\u escapes included", () => {
  for (const args of [`"${escaped(SECRET)}"`, `{"command":"echo ${escaped(SECRET)}"}`]) {
    const out = redactWholeAnswer(response([call({ name: "shell", arguments: args })]), {
      redaction,
      kind: "responses",
    });
    const input = JSON.parse(JSON.parse(out).output[0].arguments);
    assertEquals(JSON.stringify(input).includes(REDACTED), true, args);
    assertEquals(JSON.stringify(input).includes(SECRET), false, args);
  }
});

Deno.test("an ordinary Responses answer is passed on byte for byte, and written again when asked to", () => {
  const text = response([
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Thinking." }] },
    message("msg_1", [outputText(`The prefix ${SECRET.slice(0, 12)}`)]),
    message("msg_2", [outputText("dle is not a key. caf\u00e9")]),
    call({ name: "shell", arguments: '{"command": "ls"}' }),
  ]);
  assertEquals(redactWholeAnswer(text, { redaction, kind: "responses" }), text);
  // Written again, a key under the first of two equal keys (which JSON.parse drops) is gone.
  const twice = `${text.slice(0, -1)},"note":"${escaped(SECRET)}","note":"x"}`;
  const out = redactWholeAnswer(twice, { redaction, kind: "responses", rewrite: true });
  assertEquals(out, JSON.stringify(JSON.parse(twice)));
});

Deno.test("a Responses answer is refused where a client reads as text what is not a string", () => {
  const refused: [string, string][] = [
    ["an output_text part's text a number", response([message("m", [outputText(12)])])],
    ["a refusal part's refusal missing", response([message("m", [{ type: "refusal" }])])],
    [
      "a summary's text a list",
      response([{ type: "reasoning", summary: [{ type: "summary_text", text: ["a"] }] }]),
    ],
    ["a function call's name a number", response([call({ name: 1.2345678e7, arguments: "{}" })])],
    ["a function call's arguments an object", response([call({ name: "a", arguments: {} })])],
    [
      "a custom tool call's input a number",
      response([{ type: "custom_tool_call", call_id: "c", name: "a", input: 12345678 }]),
    ],
  ];
  for (const [what, text] of refused) {
    const error = assertThrows(
      () => redactWholeAnswer(text, { redaction, kind: "responses" }),
      AnswerUnreadable,
    );
    assertEquals(error.message.includes(SECRET), false, what);
  }
});

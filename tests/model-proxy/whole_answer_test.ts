/**
 * The endpoint's whole (not streamed) answers are redacted in their route's format, as a client
 * reads them: a Responses answer's output texts joined across its messages (the SDK's
 * `output_text`), and one that is not JSON is refused with 502 in the service's error format, never
 * passed on. Through the endpoint's socket, with the fake services over HTTP.
 */
import { assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";
import { REAL_KEYS, withProxy } from "./proxy_kit.ts";

const KEY = REAL_KEYS.openai;
const redaction = () => answerRedaction(Redactor.forValues([KEY]));
const TEXT = `The key is ${KEY}. Keep it safe.`;
const HALF = TEXT.indexOf(KEY) + KEY.length / 2;

function message(id: string, text: string): Record<string, unknown> {
  return {
    type: "message",
    id,
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text, annotations: [] }],
  };
}

Deno.test("a whole Responses answer with a vault key split over two messages reaches the client's output_text as one [a vault key]", async () => {
  await withProxy(async (t) => {
    t.openai.answer({
      writes: [JSON.stringify({
        id: "resp_1",
        object: "response",
        status: "completed",
        model: "gpt-5",
        output: [message("msg_1", TEXT.slice(0, HALF)), message("msg_2", TEXT.slice(HALF))],
        usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
      })],
    });
    const answer = await t.openaiPost("/v1/responses", { model: "gpt-5", input: "hi" });
    assertEquals(answer.status, 200);
    const output = (await answer.json()).output;
    const joined = output.map((item: { content: { text: string }[] }) => item.content[0].text)
      .join("");
    assertEquals(joined, TEXT.replace(KEY, "[a vault key]"));
  }, { redaction });
});

Deno.test("a whole answer that is not JSON on a JSON route is refused with 502 in the service's error format", async () => {
  await withProxy(async (t) => {
    t.openai.answer({ type: "text/plain", writes: [`the key is ${KEY}`] });
    const answer = await t.openaiPost("/v1/responses", { model: "gpt-5", input: "hi" });
    assertEquals(answer.status, 502);
    const text = await answer.text();
    assertNotIncludes(text, "the key is");
    const error = JSON.parse(text).error;
    assertEquals([error.type, error.code], ["server_error", null]);
    assertStringIncludes(error.message, "as an OpenAI Responses answer (its body is not JSON");
    assertStringIncludes(error.message, "see runbook.md#model-answer-unreadable");
  }, { redaction });
});

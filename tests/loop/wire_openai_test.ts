/**
 * The loop's Chat Completions request names its output limit as max_completion_tokens, the field
 * OpenAI's gpt-5 and o-series models take (they refuse max_tokens), and the one the model endpoint
 * reads to bound a stream cut short.
 */
import { assertEquals } from "../assert.ts";
import { openaiRequest } from "../../mod/loop/wire_openai.ts";

Deno.test("a Chat Completions request asks for at most max_completion_tokens, never max_tokens", () => {
  const body = openaiRequest([{ role: "user", text: "hi" }], {
    model: "gpt-5",
    system: "Be brief.",
    tools: [],
    maxTokens: 4096,
  });
  assertEquals(body.max_completion_tokens, 4096);
  assertEquals("max_tokens" in body, false);
});

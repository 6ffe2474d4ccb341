/**
 * Reading usage from a stream as it passes: the same counts wherever the bytes are cut, with
 * CRLF line ends too, and from each API's events; a whole answer's usage; exact prices.
 */
import { assertEquals } from "../assert.ts";
import { StreamUsage, wholeAnswerUsage } from "../../mod/model-proxy/answer_usage.ts";
import { chargedCents, exactCents } from "../../mod/model-proxy/prices.ts";
import { anthropicEvents, chatChunks, responsesEvents } from "./fake_services.ts";

const encoder = new TextEncoder();

function readAll(kind: "messages" | "responses" | "chat_completions", parts: Uint8Array[]) {
  const usage = new StreamUsage(kind);
  for (const part of parts) usage.push(part);
  usage.end();
  return usage.usage;
}

Deno.test("a Messages stream's usage is the same wherever its bytes are cut, CRLF included", () => {
  // A multi-byte character in a delta, so some cuts fall inside one.
  const text = anthropicEvents("claude-sonnet-4-5", ["héllo ✓", '"usage": 5']).join("");
  const expected = {
    tokens: { input: 1200, output: 77, cacheWrite: 300, cacheRead: 5000 },
    model: "claude-sonnet-4-5",
  };
  for (const wire of [text, text.replaceAll("\n", "\r\n")]) {
    const bytes = encoder.encode(wire);
    for (let cut = 0; cut <= bytes.length; cut++) {
      const parts = [bytes.subarray(0, cut), bytes.subarray(cut)];
      assertEquals(readAll("messages", parts), expected, `cut at ${cut}`);
    }
    assertEquals(readAll("messages", [...bytes].map((byte) => new Uint8Array([byte]))), expected);
  }
});

Deno.test("a message_delta that reports input and cache counts too replaces them", () => {
  const events = anthropicEvents("m", ["a"]);
  events.splice(
    -2,
    1,
    `event: message_delta\ndata: {"type":"message_delta","delta":{},"usage":{"input_tokens":9,"cache_read_input_tokens":0,"output_tokens":3}}\n\n`,
  );
  assertEquals(readAll("messages", [encoder.encode(events.join(""))]).tokens, {
    input: 9,
    output: 3,
    cacheWrite: 300,
    cacheRead: 0,
  });
});

Deno.test("Responses and Chat Completions streams report their usage, the cached input apart", () => {
  const tokens = { input: 800, output: 250, cacheWrite: 0, cacheRead: 100 };
  assertEquals(readAll("responses", [encoder.encode(responsesEvents("gpt-5", ["a"]).join(""))]), {
    tokens,
    model: "gpt-5",
  });
  assertEquals(readAll("chat_completions", [encoder.encode(chatChunks("gpt-5", ["a"]).join(""))]), {
    tokens,
    model: "gpt-5",
  });
  const last = chatChunks("gpt-5", ["a"]).join("").replace(/\n\n$/, "");
  assertEquals(readAll("chat_completions", [encoder.encode(last)]).tokens, tokens);
});

Deno.test("a whole answer's usage, and none from what is not JSON or has no usage", () => {
  assertEquals(
    wholeAnswerUsage("messages", JSON.stringify({ model: "m", usage: { input_tokens: 4 } })),
    { tokens: { input: 4, output: 0, cacheWrite: 0, cacheRead: 0 }, model: "m" },
  );
  assertEquals(wholeAnswerUsage("responses", "not json"), { tokens: null, model: null });
  assertEquals(wholeAnswerUsage("chat_completions", "{}"), { tokens: null, model: null });
});

Deno.test("prices are exact fractions of a cent at the table's list rates, a dated snapshot at its alias's; an unlisted model has none", () => {
  const one = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
  assertEquals(exactCents("claude-haiku-4-5", { ...one, input: 1 }), 0.0001);
  assertEquals(exactCents("claude-haiku-4-5", { ...one, cacheRead: 7 }), 0.00007);
  assertEquals(exactCents("claude-opus-4-5", { ...one, output: 1_000_000 }), 2500);
  assertEquals(exactCents("claude-sonnet-4-5", { ...one, cacheWrite: 4 }), 0.0015);
  assertEquals(exactCents("claude-opus-4-5-20251101", { ...one, output: 1_000_000 }), 2500);
  assertEquals(exactCents("claude-haiku-4-5-2025-10-01", { ...one, input: 1 }), 0.0001);
  assertEquals(exactCents("gpt-9", { ...one, input: 1 }), null);
  assertEquals(exactCents("claude-haiku-4-5-2025", { ...one, input: 1 }), null);
});

Deno.test("OpenAI's models at their list rates, a cached input at its own rate to a thousandth of a cent", () => {
  const one = { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
  const million = (model: string) => ({
    input: exactCents(model, { ...one, input: 1_000_000 }),
    cached: exactCents(model, { ...one, cacheRead: 1_000_000 }),
    output: exactCents(model, { ...one, output: 1_000_000 }),
  });
  // Cents per million tokens: OpenAI's list rates in dollars, times 100.
  const rates: Record<string, [number, number, number]> = {
    "gpt-5": [125, 12.5, 1000],
    "gpt-5-mini": [25, 2.5, 200],
    "gpt-5-nano": [5, 0.5, 40],
    "gpt-5-codex": [125, 12.5, 1000],
    "gpt-4.1": [200, 50, 800],
    "gpt-4.1-mini": [40, 10, 160],
    "gpt-4o": [250, 125, 1000],
    "gpt-4o-mini": [15, 7.5, 60],
    "o3": [200, 50, 800],
    "o4-mini": [110, 27.5, 440],
  };
  for (const [model, [input, cached, output]] of Object.entries(rates)) {
    assertEquals(million(model), { input, cached, output }, model);
  }
  // A dated snapshot at its alias's rates; 100 cached gpt-5-nano tokens cost 0.00005 cents.
  assertEquals(exactCents("gpt-5-2025-08-07", { ...one, input: 1_000_000 }), 125);
  assertEquals(exactCents("gpt-5-nano", { ...one, cacheRead: 100 }), 0.00005);
});

Deno.test("an unlisted model is charged the table's highest rate of each kind, and says so", () => {
  const tokens = {
    input: 1_000_000,
    output: 1_000_000,
    cacheWrite: 1_000_000,
    cacheRead: 1_000_000,
  };
  // The table's highest of each kind: claude-opus-4-5's $5, $25 and $6.25; gpt-4o's cached $1.25.
  assertEquals(chargedCents({ asked: "gpt-9", answered: "gpt-9-2026-08-07" }, tokens), {
    cents: 500 + 2500 + 625 + 125,
    listed: false,
  });
  assertEquals(chargedCents({ asked: "gpt-9", answered: "claude-haiku-4-5" }, tokens), {
    cents: 100 + 500 + 125 + 10,
    listed: true,
  });
});

Deno.test("a stream's usage is final at Anthropic's message_delta, a Responses usage and Chat's last usage chunk, not before", () => {
  const final = (kind: "messages" | "responses" | "chat_completions", text: string) => {
    const meter = new StreamUsage(kind);
    meter.push(encoder.encode(text));
    return meter.final;
  };
  const messages = anthropicEvents("claude-sonnet-4-5", ["a"]);
  const delta = messages.findIndex((event) => event.includes("message_delta"));
  assertEquals(final("messages", messages.slice(0, delta).join("")), false);
  assertEquals(final("messages", messages.slice(0, delta + 1).join("")), true);
  const responses = responsesEvents("gpt-5", ["a"]);
  assertEquals(final("responses", responses.slice(0, -1).join("")), false);
  assertEquals(final("responses", responses.join("")), true);
  const chunks = chatChunks("gpt-5", ["a"]);
  assertEquals(final("chat_completions", chunks.slice(0, -2).join("")), false);
  assertEquals(final("chat_completions", chunks.join("")), true);
  // Usage beside a choice (continuous usage stats) is not yet the whole.
  const running = `data: ${
    JSON.stringify({
      choices: [{ index: 0, delta: { content: "a" } }],
      usage: { prompt_tokens: 3 },
    })
  }\n\n`;
  assertEquals(final("chat_completions", running), false);
});

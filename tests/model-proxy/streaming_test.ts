/**
 * The model endpoint streams answers as they come, byte for byte, and meters every answer: the
 * usage of Anthropic's message_start/message_delta, the Responses API's response.completed and a
 * Chat Completions stream's usage chunk, and of whole answers, priced in exact fractions of a cent.
 */
import { assert, assertEquals, assertNotIncludes } from "../assert.ts";
import {
  ANTHROPIC_OUTPUT,
  ANTHROPIC_USAGE,
  anthropicEvents,
  OPENAI_USAGE,
  responsesEvents,
  streamed,
} from "./fake_services.ts";
import { gate, REAL_KEYS, withProxy } from "./proxy_kit.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";

const ANTHROPIC_TOKENS = {
  input: ANTHROPIC_USAGE.input_tokens,
  output: ANTHROPIC_OUTPUT,
  cacheWrite: ANTHROPIC_USAGE.cache_creation_input_tokens,
  cacheRead: ANTHROPIC_USAGE.cache_read_input_tokens,
};
/** claude-sonnet-4-5 at $3, $15, $3.75 and $0.30 a million: 7,380 micro-dollars, 0.738 cents. */
const ANTHROPIC_CENTS = (1200 * 3 + 77 * 15 + 300 * 3.75 + 5000 * 0.3) / 10_000;
const OPENAI_TOKENS = {
  input: OPENAI_USAGE.input - OPENAI_USAGE.cached,
  output: OPENAI_USAGE.output,
  cacheWrite: 0,
  cacheRead: OPENAI_USAGE.cached,
};

/**
 * An unlisted model at the table's highest rate of each kind: input and output claude-opus-4-5's
 * ($5, $25), a cache read gpt-4o's ($1.25).
 */
const OPENAI_HIGHEST_CENTS =
  (OPENAI_TOKENS.input * 5 + OPENAI_TOKENS.output * 25 + OPENAI_TOKENS.cacheRead * 1.25) / 10_000;

/** gpt-5 at its list rates, $1.25, $10 and $0.125 (cached input) a million: 0.35125 cents. */
const GPT_5_CENTS = 0.35125;

const MESSAGES = {
  model: "claude-sonnet-4-5",
  max_tokens: 100,
  messages: [{ role: "user", content: "hi" }],
};

/** A clock that moves 250 ms each time it is read. */
function steppingClock(): () => number {
  let now = 1_000;
  return () => (now += 250);
}

Deno.test("a streamed Messages answer arrives byte for byte and is metered from message_start and message_delta", async () => {
  await withProxy(async (t) => {
    const events = anthropicEvents("claude-sonnet-4-5-20250929", ["Hel", "lo"]);
    t.anthropic.answer(streamed(events));
    const answer = await t.anthropicPost("/v1/messages", { ...MESSAGES, stream: true });
    assertEquals(answer.headers.get("content-type"), "text/event-stream; charset=utf-8");
    assertEquals(await answer.text(), events.join(""));
    await t.usageReports(1);
    assertEquals(t.usage, [{
      service: "anthropic",
      model: "claude-sonnet-4-5",
      cents: ANTHROPIC_CENTS,
      nanocents: Math.round(ANTHROPIC_CENTS * 1e9),
      rates: "listed",
      tokens: ANTHROPIC_TOKENS,
      path: "/v1/messages",
      ms: 250,
    }]);
    assertEquals(t.proxy.active, 0);
  }, { clock: steppingClock() });
});

Deno.test("a whole Messages answer is metered before it is sent; count_tokens and models are not metered", async () => {
  await withProxy(async (t) => {
    const answer = await t.anthropicPost("/v1/messages", MESSAGES);
    assertEquals((await answer.json()).content[0].text, "Hello there");
    assertEquals(t.usage.map((u) => [u.model, u.cents, u.tokens]), [[
      "claude-sonnet-4-5",
      ANTHROPIC_CENTS,
      ANTHROPIC_TOKENS,
    ]]);
    const count = await t.anthropicPost("/v1/messages/count_tokens", MESSAGES);
    assertEquals(await count.json(), { input_tokens: 1234 });
    assertEquals(t.usage.length, 1);
  });
});

Deno.test("gpt-5 Responses answers, streamed and whole, are charged at gpt-5's list rates, not the table's highest", async () => {
  await withProxy(async (t) => {
    const events = responsesEvents("gpt-5-2025-08-07", ["a", "b"]);
    t.openai.answer(streamed(events));
    const body = { model: "gpt-5", input: "hi", stream: true };
    const answer = await t.openaiPost("/v1/responses", body);
    assertEquals(await answer.text(), events.join(""));
    await t.usageReports(1);
    const whole = await t.openaiPost("/v1/responses", { ...body, stream: false });
    assertEquals((await whole.json()).status, "completed");
    const row = ["openai", "gpt-5", GPT_5_CENTS, "listed", OPENAI_TOKENS];
    assertEquals(
      t.usage.map((u) => [u.service, u.model, u.cents, u.rates, u.tokens, u.path]),
      [[...row, "/v1/responses"], [...row, "/v1/responses"]],
    );
  });
});

Deno.test("an answer of a model the table does not list is charged the table's highest rate of each kind", async () => {
  await withProxy(async (t) => {
    const events = responsesEvents("gpt-9-preview", ["a"]);
    t.openai.answer(streamed(events));
    const answer = await t.openaiPost("/v1/responses", {
      model: "gpt-9-preview",
      input: "hi",
      stream: true,
    });
    assertEquals(await answer.text(), events.join(""));
    await t.usageReports(1);
    assertEquals(
      t.usage.map((u) => [u.model, u.cents, u.rates]),
      [["gpt-9-preview", OPENAI_HIGHEST_CENTS, "highest"]],
    );
  });
});

Deno.test("a Chat Completions stream is asked for its usage chunk and metered from it, and a whole one from its usage", async () => {
  await withProxy(async (t) => {
    const body = { model: "gpt-5", messages: [{ role: "user", content: "hi" }], stream: true };
    const answer = await t.openaiPost("/v1/chat/completions", body);
    const text = await answer.text();
    assert(text.endsWith("data: [DONE]\n\n"), text);
    await t.usageReports(1);
    assertEquals(JSON.parse(t.openai.requests[0].body).stream_options, { include_usage: true });
    const kept = { ...body, stream_options: { include_usage: true } };
    await (await t.openaiPost("/v1/chat/completions", kept)).text();
    await (await t.openaiPost("/v1/chat/completions", { ...body, stream: false })).json();
    await t.usageReports(3);
    assertEquals(JSON.parse(t.openai.requests[1].body), kept);
    assertEquals(t.usage.map((u) => u.tokens), [OPENAI_TOKENS, OPENAI_TOKENS, OPENAI_TOKENS]);
  });
});

Deno.test("the first event reaches the client while the service still holds the rest", async () => {
  await withProxy(async (t) => {
    const events = anthropicEvents("claude-sonnet-4-5", ["one", "two"]);
    const rest = gate();
    t.anthropic.answer(streamed([events[0], events.slice(1).join("")], [rest.promise]));
    const answer = await t.anthropicPost("/v1/messages", { ...MESSAGES, stream: true });
    const reader = answer.body!.pipeThrough(new TextDecoderStream()).getReader();
    let first = "";
    while (!first.endsWith("\n\n")) first += (await reader.read()).value;
    assertEquals(first, events[0]);
    assertEquals([t.usage, t.proxy.active], [[], 1]);
    rest.open();
    let tail = "";
    for (let part = await reader.read(); !part.done; part = await reader.read()) tail += part.value;
    assertEquals(first + tail, events.join(""));
    await t.usageReports(1);
    assertEquals(t.usage[0].tokens, ANTHROPIC_TOKENS);
  });
});

Deno.test("a client that goes away mid-stream frees its slot, and is charged the input reported and all the output it asked for", async () => {
  await withProxy(async (t) => {
    const events = anthropicEvents("claude-sonnet-4-5", ["one"]);
    const never = gate();
    t.anthropic.answer(streamed([events[0], events[1]], [never.promise]));
    const answer = await t.anthropicPost("/v1/messages", { ...MESSAGES, stream: true });
    const reader = answer.body!.getReader();
    await reader.read();
    await reader.cancel();
    // The slot is freed before the usage is reported.
    await t.usageReports(1);
    assertEquals(t.proxy.active, 0);
    // Its output was cut at 1 token, but a client that leaves early must not pay less than a
    // whole answer could cost: the request's max_tokens.
    assertEquals(t.usage[0].tokens, { ...ANTHROPIC_TOKENS, output: MESSAGES.max_tokens });
    never.open();
  });
});

Deno.test("more requests than maxConcurrent at once are a 429 in the service's format until one ends", async () => {
  await withProxy(async (t) => {
    const rest = gate();
    const events = anthropicEvents("claude-sonnet-4-5", ["x"]);
    t.anthropic.answer(streamed([events[0], events.slice(1).join("")], [rest.promise]));
    const held = await t.anthropicPost("/v1/messages", { ...MESSAGES, stream: true });
    const busy = await t.openaiPost("/v1/responses", { model: "gpt-5", input: "hi" });
    assertEquals([busy.status, busy.headers.get("retry-after")], [429, "1"]);
    assertEquals((await busy.json()).error.code, "rate_limit_exceeded");
    const busyToo = await t.anthropicPost("/v1/messages", MESSAGES);
    assertEquals((await busyToo.json()).error.type, "rate_limit_error");
    rest.open();
    await held.text();
    // The slot is freed before the stream's end reaches the client.
    assertEquals(t.proxy.active, 0);
    const after = await t.anthropicPost("/v1/messages", MESSAGES);
    assertEquals(after.status, 200);
    await after.body?.cancel();
    assertEquals(t.openai.requests, []);
  }, { maxConcurrent: 1 });
});

Deno.test("a service's error answer is passed on with its status and not metered", async () => {
  await withProxy(async (t) => {
    const error = {
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
      request_id: "req_1",
    };
    t.anthropic.answer({
      status: 529,
      writes: [JSON.stringify(error)],
      headers: { "request-id": "req_1" },
    });
    const answer = await t.anthropicPost("/v1/messages", MESSAGES);
    assertEquals([answer.status, answer.headers.get("request-id")], [529, "req_1"]);
    assertEquals(await answer.json(), error);
    assertEquals(t.usage, []);
  });
});

Deno.test("with a redaction, a whole answer that echoes the vault's key reaches the client without it", async () => {
  const key = REAL_KEYS.anthropic;
  const redaction = () => answerRedaction(Redactor.forValues([key]));
  await withProxy(async (t) => {
    // The key spelled with a JSON escape is in no run of the answer's bytes.
    const escaped = key.replace("-", "\\u002d");
    t.anthropic.answer({
      status: 401,
      writes: [
        `{"type":"error","error":{"type":"authentication_error","message":"bad key ${escaped}"}}`,
      ],
    });
    const answer = await t.anthropicPost("/v1/messages", MESSAGES);
    assertEquals(answer.status, 401);
    const text = await answer.text();
    assertNotIncludes(text, key);
    assertEquals(JSON.parse(text).error.message, "bad key [a vault key]");
    // One that is not JSON is refused in the service's format, never passed on redacted.
    t.anthropic.answer({ status: 503, type: "text/plain", writes: [`upstream said ${key}`] });
    const plain = await t.anthropicPost("/v1/messages", MESSAGES);
    assertEquals(plain.status, 502);
    const refusal = await plain.text();
    assertNotIncludes(refusal, "upstream said");
    assert(JSON.parse(refusal).error.message.endsWith("see runbook.md#model-answer-unreadable"));
  }, { redaction });
});

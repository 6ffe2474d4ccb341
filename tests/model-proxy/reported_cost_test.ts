/**
 * A provider whose prices are "reported" is charged the cost it reports, exactly: OpenRouter's
 * `usage.cost` in a whole answer and in a stream's usage chunk, LiteLLM's
 * `x-litellm-response-cost` header; a provider not set so is priced by the rates whatever it says.
 * And a stream cut short is charged the usage it reported when it had said its whole usage, else
 * the most it could cost, its journal line saying which. Through a real core, against scripted
 * fakes at base URLs with paths.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { until } from "../kit/mod.ts";
import { journalWords } from "../../mod/owner-text/mod.ts";
import { streamed, whole } from "./fake_services.ts";
import { gate } from "./proxy_kit.ts";
import {
  chat,
  chatStream,
  chatUsage,
  chatWhole,
  journalOf,
  PLACEHOLDER,
  send,
  withSpend,
} from "./spend_kit.ts";

const ROUTED = "openrouter/anthropic/claude-sonnet-4.5";

Deno.test("OpenRouter's usage.cost is charged exactly, whole and streamed, for a provider whose prices are reported", async () => {
  await withSpend({}, async ({ fake, box, task, socket }) => {
    const tokens = { input: 1234, output: 567 };
    fake.answer(whole(chatWhole("anthropic/claude-sonnet-4.5", chatUsage(tokens, 0.0123456))));
    const first = await send(socket, { path: "/v1/chat/completions", body: chat(ROUTED) });
    assertEquals(first.status, 200, first.text);
    fake.answer(streamed(chatStream("anthropic/claude-sonnet-4.5", chatUsage(tokens, 0.000321))));
    const second = await send(socket, { path: "/v1/chat/completions", body: chat(ROUTED, true) });
    assertEquals(second.status, 200, second.text);
    await until(async () => (await journalOf(box, task, "model.usage")).length === 2);
    const lines = await journalOf(box, task, "model.usage");
    // $0.0123456 is 1.23456¢; $0.000321 is 0.0321¢: billionths of a cent, not rounded.
    assertEquals(lines.map((line) => [line.provider, line.rates, line.nanocents]), [
      ["openrouter", "reported", 1_234_560_000],
      ["openrouter", "reported", 32_100_000],
    ]);
    assertStringIncludes(journalWords(lines[0] as never), "as the provider reported it");
    const shown = (await box.admin("GET", `/tasks/${task.id}`)).body.task;
    assertEquals(shown.spend[0].nanocents, 1_234_560_000 + 32_100_000);
    assertEquals(shown.spend[0].requests, 2);
    assertEquals(shown.spentCents, 1);
  });
});

Deno.test("LiteLLM's x-litellm-response-cost header is charged exactly for a provider whose prices are reported", async () => {
  await withSpend({}, async ({ fake, box, task, socket }) => {
    fake.answer({
      ...whole(chatWhole("qwen3-coder", chatUsage({ input: 10, output: 10 }))),
      headers: { "x-litellm-response-cost": "0.00042" },
    });
    const answer = await send(socket, {
      path: "/v1/chat/completions",
      body: chat("litellm/qwen3-coder"),
    });
    assertEquals(answer.status, 200, answer.text);
    const [line] = await journalOf(box, task, "model.usage");
    assertEquals([line.provider, line.rates, line.nanocents], ["litellm", "reported", 42_000_000]);
    assertEquals(fake.requests.at(-1)!.path, "/litellm/chat/completions");
  });
});

Deno.test('a cost reported by a provider not set to prices = "reported" is not what is charged', async () => {
  await withSpend({}, async ({ fake, box, task, socket }) => {
    // gpt-4o-mini at its listed $0.15 and $0.60 per million, whatever the answer says it cost.
    fake.answer(whole(chatWhole("gpt-4o-mini", chatUsage({ input: 1000, output: 1000 }, 99))));
    const answer = await send(socket, { path: "/v1/chat/completions", body: chat("gpt-4o-mini") });
    assertEquals(answer.status, 200, answer.text);
    const [line] = await journalOf(box, task, "model.usage");
    assertEquals([line.rates, line.nanocents], ["listed", 1000 * 15_000 + 1000 * 60_000]);
  });
});

/** Sends a streamed Chat request, reads its answer until `seen` is in it, and leaves. */
async function leaveAt(socket: string, body: unknown, seen: string): Promise<void> {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  try {
    const response = await fetch("http://127.0.0.1/v1/chat/completions", {
      method: "POST",
      client,
      headers: { "content-type": "application/json", authorization: `Bearer ${PLACEHOLDER}` },
      body: JSON.stringify(body),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes(seen)) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the answer ended before ${seen}: ${text}`);
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
  } finally {
    client.close();
  }
}

Deno.test("a stream cut short after its usage chunk is charged that usage exactly, and its journal line says so", async () => {
  await withSpend({}, async ({ fake, box, task, socket }) => {
    const held = gate();
    const writes = chatStream("gpt-4o-mini", chatUsage({ input: 1000, output: 20 }));
    // Everything up to the usage chunk; [DONE] waits.
    fake.answer(streamed(writes, [Promise.resolve(), Promise.resolve(), held.promise]));
    await leaveAt(socket, chat("gpt-4o-mini", true), '"usage":{');
    await until(async () => (await journalOf(box, task, "model.usage")).length === 1);
    held.open();
    const [line] = await journalOf(box, task, "model.usage");
    assertEquals(line.cut, "reported");
    assertEquals(line.tokens, { input: 1000, output: 20, cacheWrite: 0, cacheRead: 0 });
    assertEquals(line.nanocents, 1000 * 15_000 + 20 * 60_000);
    assertStringIncludes(journalWords(line as never), "cut short after its usage");
  });
});

Deno.test("a stream cut short before its usage is charged the most it could cost, and its journal line says so", async () => {
  await withSpend({}, async ({ fake, box, task, socket }) => {
    const held = gate();
    const writes = chatStream("gpt-4o-mini", chatUsage({ input: 1000, output: 20 }));
    fake.answer(streamed(writes, [held.promise]));
    await leaveAt(socket, chat("gpt-4o-mini", true), '"content":"Hi"');
    await until(async () => (await journalOf(box, task, "model.usage")).length === 1);
    held.open();
    const [line] = await journalOf(box, task, "model.usage");
    assertEquals(line.cut, "bound");
    // All the output it asked for (max_tokens 1000).
    assertEquals((line.tokens as { output: number }).output, 1000);
    assertStringIncludes(journalWords(line as never), "charged the most it could cost");
    const row = (await box.admin("GET", `/tasks/${task.id}`)).body.task.spend[0];
    assertEquals(row.bounded, 1);
  });
});

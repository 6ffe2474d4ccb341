/**
 * The endpoint's admission hook (`admit`), which the core uses to hold a task's model requests over
 * its budget for the owner (docs/grants.md#budgets): it is asked about every request that the
 * service would bill, after the body's check and before anything is sent, with the service, the
 * model and the path. Its 403 and 429 are answered in the service's own error format and nothing
 * reaches the service; a request it holds ends when its client leaves.
 */
import { assert, assertEquals } from "../assert.ts";
import type { AdmitRequest } from "../../mod/model-proxy/mod.ts";
import { until } from "../kit/mod.ts";
import { gate, withProxy } from "./proxy_kit.ts";

const MESSAGES = {
  model: "claude-sonnet-4-5",
  max_tokens: 100,
  messages: [{ role: "user", content: "hi" }],
};

const RESPONSES = { model: "gpt-5", input: "hi" };

Deno.test("admit is asked about each billed request after its body's check, and one it lets on is sent", async () => {
  const asked: AdmitRequest[] = [];
  await withProxy(async (t) => {
    assertEquals((await t.anthropicPost("/v1/messages", MESSAGES)).status, 200);
    assertEquals((await t.openaiPost("/v1/responses", RESPONSES)).status, 200);
    const chat = { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] };
    assertEquals((await t.openaiPost("/v1/chat/completions", chat)).status, 200);
    // Not billed: count_tokens and the model list are not asked about.
    assertEquals((await t.anthropicPost("/v1/messages/count_tokens", MESSAGES)).status, 200);
    const models = await fetch(`${t.url}/v1/models`, { headers: { "x-api-key": "p" } });
    assertEquals(models.status, 200);
    await models.body?.cancel();
    // A body refused by its check is never asked about.
    const fetching = await t.anthropicPost("/v1/messages", {
      ...MESSAGES,
      mcp_servers: [{ type: "url", url: "http://10.0.0.1/mcp", name: "x" }],
    });
    assertEquals(fetching.status, 403);
    await fetching.body?.cancel();
    assertEquals(asked, [
      { service: "anthropic", model: "claude-sonnet-4-5", path: "/v1/messages" },
      { service: "openai", model: "gpt-5", path: "/v1/responses" },
      { service: "openai", model: "gpt-4o", path: "/v1/chat/completions" },
    ]);
    assertEquals(t.anthropic.requests.length, 3);
    assertEquals(t.openai.requests.length, 2);
  }, {
    admit: (request) => {
      asked.push(request);
      return Promise.resolve(null);
    },
  });
});

Deno.test("a 403 from admit is the service's permission error with its message, and nothing is sent", async () => {
  const message = "the owner refused it";
  await withProxy(async (t) => {
    const anthropic = await t.anthropicPost("/v1/messages", { ...MESSAGES, stream: true });
    assertEquals(anthropic.status, 403);
    assertEquals(await anthropic.json(), {
      type: "error",
      error: { type: "permission_error", message },
    });
    const openai = await t.openaiPost("/v1/responses", RESPONSES);
    assertEquals(openai.status, 403);
    assertEquals(await openai.json(), {
      error: { message, type: "invalid_request_error", param: null, code: "refused_by_owner" },
    });
    assertEquals(t.anthropic.requests.length + t.openai.requests.length, 0);
    assertEquals(t.usage.length, 0);
    assertEquals(t.proxy.active, 0);
  }, { admit: () => Promise.resolve({ status: 403, message }) });
});

Deno.test("a 429 from admit is the service's rate-limit error with retry-after, which SDKs retry; nothing is sent", async () => {
  const message = "waiting for the owner (gurt approve 7); try again";
  await withProxy(async (t) => {
    const anthropic = await t.anthropicPost("/v1/messages", MESSAGES);
    assertEquals(anthropic.status, 429);
    assertEquals(anthropic.headers.get("retry-after"), "1");
    assertEquals(await anthropic.json(), {
      type: "error",
      error: { type: "rate_limit_error", message },
    });
    const openai = await t.openaiPost("/v1/chat/completions", {
      model: "gpt-5",
      messages: [{ role: "user", content: "hi" }],
    });
    assertEquals(openai.status, 429);
    assertEquals(openai.headers.get("retry-after"), "1");
    assertEquals(await openai.json(), {
      error: { message, type: "requests", param: null, code: "rate_limit_exceeded" },
    });
    assertEquals(t.anthropic.requests.length + t.openai.requests.length, 0);
    assertEquals(t.proxy.active, 0);
  }, { admit: () => Promise.resolve({ status: 429, message }) });
});

Deno.test("a request held by admit is sent once admit lets it on; one whose client leaves meanwhile is told by the signal and never sent", async () => {
  const letOn = gate();
  const held: { request: AdmitRequest; signal: AbortSignal }[] = [];
  await withProxy(async (t) => {
    // The first request waits in admit; the owner's answer (the gate) lets it on.
    const first = t.anthropicPost("/v1/messages", MESSAGES);
    await until(() => held.length === 1);
    assertEquals(t.anthropic.requests.length, 0);
    assertEquals(t.proxy.active, 1);
    letOn.open();
    assertEquals((await first).status, 200);
    assertEquals(t.anthropic.requests.length, 1);

    // The second request's client gives up while it is held.
    const leaving = new AbortController();
    const second = fetch(`${t.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "p" },
      body: JSON.stringify(MESSAGES),
      signal: leaving.signal,
    }).catch((error) => error);
    await until(() => held.length === 2);
    leaving.abort();
    assert((await second) instanceof Error);
    await until(() => held[1].signal.aborted);
    await until(() => t.proxy.active === 0);
    assertEquals(t.anthropic.requests.length, 1);
  }, {
    admit: async (request, signal) => {
      held.push({ request, signal });
      if (held.length === 1) {
        await letOn.promise;
        return null;
      }
      // Held until the client leaves; what is answered then reaches no one.
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      return { status: 429, message: "gone" };
    },
  });
});

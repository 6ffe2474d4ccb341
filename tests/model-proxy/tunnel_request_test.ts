/**
 * A request that came to a service's own host through the box's TLS (an agent that ignores its
 * base URL) is relayed like the endpoint's own, with two differences: only a credential that is
 * the task's placeholder becomes the vault's key, in the same header it came in (any other is the
 * client's own and goes as it is), and a path of the other service's is not relayed.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import {
  ANTHROPIC_HEADERS,
  OPENAI_HEADERS,
  PLACEHOLDER,
  REAL_KEYS,
  withProxy,
} from "./proxy_kit.ts";

const MESSAGES = {
  model: "claude-haiku-4-5",
  max_tokens: 16,
  messages: [{ role: "user", content: "hi" }],
};

function tunnelled(path: string, body: unknown, headers: Record<string, string>): Request {
  return new Request(`https://api.example.invalid${path}`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
}

Deno.test("through the box's TLS the placeholder becomes the vault's key in the header it came in", async () => {
  await withProxy(async (t) => {
    const viaKey = await t.proxy.tunnelRequest(
      tunnelled("/v1/messages", MESSAGES, ANTHROPIC_HEADERS),
      "anthropic",
    );
    assertEquals(viaKey.status, 200);
    const { "x-api-key": _drop, ...noKey } = ANTHROPIC_HEADERS;
    const viaBearer = await t.proxy.tunnelRequest(
      tunnelled("/v1/messages", MESSAGES, { ...noKey, authorization: `Bearer ${PLACEHOLDER}` }),
      "anthropic",
    );
    assertEquals(viaBearer.status, 200);
    const [first, second] = t.anthropic.requests;
    assertEquals([first.headers["x-api-key"], first.headers["authorization"]], [
      REAL_KEYS.anthropic,
      undefined,
    ]);
    assertEquals([second.headers["x-api-key"], second.headers["authorization"]], [
      undefined,
      `Bearer ${REAL_KEYS.anthropic}`,
    ]);
    assertEquals(JSON.parse(first.body).model, "claude-haiku-4-5");
    await t.usageReports(2);
    assertEquals(t.usage.map((event) => event.service), ["anthropic", "anthropic"]);
  });
});

Deno.test("through the box's TLS a credential that is not the placeholder goes as it is, and needs no vault key", async () => {
  await withProxy(async (t) => {
    const own = { ...OPENAI_HEADERS, authorization: "Bearer sk-the-users-own-token" };
    const answer = await t.proxy.tunnelRequest(
      tunnelled("/v1/responses", { model: "gpt-5", input: "hi" }, own),
      "openai",
    );
    assertEquals(answer.status, 200);
    assertEquals(t.openai.requests[0].headers["authorization"], "Bearer sk-the-users-own-token");
  }, { keys: { openai: null } });
});

Deno.test("through the box's TLS the placeholder with no vault key gets the no-key sentence, and the service nothing", async () => {
  await withProxy(async (t) => {
    const answer = await t.proxy.tunnelRequest(
      tunnelled("/v1/messages", MESSAGES, ANTHROPIC_HEADERS),
      "anthropic",
    );
    assertEquals(answer.status >= 400, true);
    assertStringIncludes(await answer.text(), "No model key yet");
    assertEquals(t.anthropic.requests.length, 0);
  }, { keys: { anthropic: null } });
});

Deno.test("a path of the other service's, sent to a service's own host, is not relayed", async () => {
  await withProxy(async (t) => {
    const answer = await t.proxy.tunnelRequest(
      tunnelled("/v1/responses", { model: "gpt-5", input: "hi" }, OPENAI_HEADERS),
      "anthropic",
    );
    assertEquals(answer.status, 404);
    assertEquals((await answer.json()).type, "error");
    assertEquals([t.anthropic.requests.length, t.openai.requests.length], [0, 0]);
  });
});

Deno.test("a tunnelled request is checked like the endpoint's own: a url image source is refused", async () => {
  await withProxy(async (t) => {
    const body = {
      ...MESSAGES,
      messages: [{
        role: "user",
        content: [{ type: "image", source: { type: "url", url: "http://169.254.169.254/" } }],
      }],
    };
    const answer = await t.proxy.tunnelRequest(
      tunnelled("/v1/messages", body, ANTHROPIC_HEADERS),
      "anthropic",
    );
    assertEquals(answer.status, 403);
    assertEquals(t.blocked.length, 1);
    assertEquals(t.anthropic.requests.length, 0);
  });
});

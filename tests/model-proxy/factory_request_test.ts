/**
 * Droid's requests to api.factory.ai, through the box's TLS: its model paths are checked and
 * metered like Anthropic's and OpenAI's and carry the vault's FACTORY_API_KEY in place of the
 * placeholder; its settings, limits, session and telemetry paths are relayed as they are, their
 * answers redacted; every other Factory path (a hosted connector's tool, Factory's web search) is
 * refused with a 403 and reported, and Factory is sent nothing.
 */
import { assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { anthropicMessage, type FakeRequest, startFakeService, whole } from "./fake_services.ts";
import { PLACEHOLDER, withProxy } from "./proxy_kit.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";

const FACTORY_KEY = "fk-REAL-factory-vault-key-51c0";
const CANARY = "canary-vault-value-9d2e7f";

function factoryUsual(request: FakeRequest) {
  if (request.path.startsWith("/api/llm/a/v1/messages")) {
    return whole(anthropicMessage(JSON.parse(request.body).model, "Hello"));
  }
  // Settings that echo a vault value, split across two writes.
  return {
    writes: [`{"limits":"${CANARY.slice(0, 9)}`, `${CANARY.slice(9)}","ok":true}`],
  };
}

function tunnelled(
  path: string,
  init: { method?: string; body?: unknown; auth?: string } = {},
): Request {
  return new Request(`https://api.factory.ai${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: {
      "content-type": "application/json",
      authorization: init.auth ?? `Bearer ${PLACEHOLDER}`,
      "x-factory-client": "cli",
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

async function withFactory(
  body: Parameters<typeof withProxy>[0],
  key: string | null = FACTORY_KEY,
) {
  const factory = startFakeService(factoryUsual);
  try {
    await withProxy(body, {
      factory: { baseUrl: factory.url, key },
      redaction: () => answerRedaction(Redactor.forValues([CANARY])),
    });
  } finally {
    await factory.close();
  }
  return factory;
}

Deno.test("a Factory model path carries the vault's key in place of the placeholder and is metered", async () => {
  let fake: FakeRequest[] = [];
  const factory = await withFactory(async (t) => {
    const answer = await t.proxy.factoryRequest(tunnelled("/api/llm/a/v1/messages", {
      body: {
        model: "claude-sonnet-4-5",
        max_tokens: 8,
        messages: [{ role: "user", content: "hi" }],
      },
    }));
    assertEquals(answer.status, 200);
    await t.usageReports(1);
    assertEquals(t.usage[0].model, "claude-sonnet-4-5");
  });
  fake = factory.requests;
  assertEquals(fake.length, 1);
  assertEquals(fake[0].headers["authorization"], `Bearer ${FACTORY_KEY}`);
  assertEquals(fake[0].headers["x-factory-client"], "cli");
});

Deno.test("Factory's settings and limits are relayed with the key, and a vault value in the answer is redacted even split across writes", async () => {
  const factory = await withFactory(async (t) => {
    const answer = await t.proxy.factoryRequest(tunnelled("/api/billing/limits"));
    assertEquals(answer.status, 200);
    const text = await answer.text();
    assertNotIncludes(text, CANARY);
    assertStringIncludes(text, '"ok":true');
    const session = await t.proxy.factoryRequest(
      tunnelled("/api/sessions/create", { body: { id: "s1", title: "go" } }),
    );
    assertEquals(session.status, 200);
    await session.body?.cancel();
  });
  assertEquals(factory.requests.map((request) => request.path), [
    "/api/billing/limits",
    "/api/sessions/create",
  ]);
  assertEquals(factory.requests[0].headers["authorization"], `Bearer ${FACTORY_KEY}`);
});

Deno.test("every other Factory path is refused with a 403 and reported, and Factory is sent nothing", async () => {
  const factory = await withFactory(async (t) => {
    for (
      const path of [
        "/api/connectors/tools/call",
        "/api/tools/web-search",
        "/api/tools/get-url-contents",
        "/api/sessions/%2e%2e/connectors/tools/call",
        "/api/sessions/x%2F..%2F..%2Fconnectors",
      ]
    ) {
      const answer = await t.proxy.factoryRequest(tunnelled(path, { body: { q: 1 } }));
      assertEquals(answer.status, 403, path);
      assertStringIncludes(await answer.text(), "see runbook.md#model-proxy-refused");
    }
    assertEquals(t.blocked.map((event) => [event.service, event.reason]), [
      ["factory", "factory_path"],
      ["factory", "factory_path"],
      ["factory", "factory_path"],
      ["factory", "factory_path"],
      ["factory", "factory_path"],
    ]);
  });
  assertEquals(factory.requests.length, 0);
});

Deno.test("with no FACTORY_API_KEY in the vault Factory is sent nothing, keyless requests included", async () => {
  const factory = await withFactory(async (t) => {
    const answer = await t.proxy.factoryRequest(tunnelled("/api/billing/limits"));
    assertStringIncludes(await answer.text(), "FACTORY_API_KEY");
    assertEquals(answer.status >= 400, true);
    // Droid without a Factory key (bring-your-own Anthropic key) still calls these, with no key.
    const keyless = await t.proxy.factoryRequest(
      tunnelled("/api/sessions/create", { body: { id: "s" }, auth: "" }),
    );
    assertEquals(keyless.status, 404);
    assertStringIncludes(await keyless.text(), "nothing went to Factory");
  }, null);
  assertEquals(factory.requests.length, 0);
});

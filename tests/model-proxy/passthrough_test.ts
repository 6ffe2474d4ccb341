/**
 * The model endpoint relays the services' own requests as the client wrote them: every header but
 * the connection's own and the credentials, the body and the model the agent chose, the query. The
 * vault's key arrives at the service in the header it reads; the placeholder never does. What it
 * does not relay it answers in the service's own error format.
 */
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import {
  ANTHROPIC_HEADERS,
  OPENAI_HEADERS,
  PLACEHOLDER,
  REAL_KEYS,
  withProxy,
} from "./proxy_kit.ts";

const MESSAGES_BODY = {
  model: "claude-opus-4-5",
  max_tokens: 1024,
  system: [{ type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } }],
  messages: [{ role: "user", content: [{ type: "text", text: "héllo \u2028 wörld" }] }],
  tools: [
    { name: "Bash", description: "runs", input_schema: { type: "object", properties: {} } },
    { type: "bash_20250124", name: "bash" },
    { type: "text_editor_20250728", name: "str_replace_based_edit_tool" },
  ],
  thinking: { type: "enabled", budget_tokens: 2048 },
};

Deno.test("an Anthropic request reaches the service with its headers, body, model and query, and the vault's key", async () => {
  await withProxy(async (t) => {
    const answer = await t.anthropicPost("/v1/messages?beta=true", MESSAGES_BODY);
    assertEquals(answer.status, 200);
    assertEquals((await answer.json()).model, "claude-opus-4-5");
    assertEquals(t.anthropic.requests.length, 1);
    const got = t.anthropic.requests[0];
    assertEquals(got.path, "/v1/messages?beta=true");
    assertEquals(JSON.parse(got.body), MESSAGES_BODY);
    for (const name of ["anthropic-version", "anthropic-beta", "user-agent", "x-stainless-lang"]) {
      assertEquals(got.headers[name], ANTHROPIC_HEADERS[name], name);
    }
    assertEquals(got.headers["content-type"], "application/json");
    assertEquals(got.headers["x-api-key"], REAL_KEYS.anthropic);
    assertEquals(got.headers.authorization, undefined);
    assertNotIncludes(JSON.stringify(got), PLACEHOLDER);
    assertEquals(t.openai.requests, []);
  });
});

Deno.test("an OpenAI request reaches the service with the vault's key as its bearer token, the placeholder nowhere", async () => {
  await withProxy(async (t) => {
    const body = { model: "gpt-5-codex", input: "hi", reasoning: { effort: "high" } };
    const answer = await t.openaiPost("/v1/responses", body, { "x-api-key": PLACEHOLDER });
    assertEquals(answer.status, 200);
    const got = t.openai.requests[0];
    assertEquals([got.path, JSON.parse(got.body)], ["/v1/responses", body]);
    assertEquals(got.headers.authorization, `Bearer ${REAL_KEYS.openai}`);
    assertEquals(got.headers["openai-beta"], OPENAI_HEADERS["openai-beta"]);
    assertEquals(got.headers["user-agent"], OPENAI_HEADERS["user-agent"]);
    assertEquals(got.headers["x-api-key"], undefined);
    assertNotIncludes(JSON.stringify(got), PLACEHOLDER);
    assertNotIncludes(JSON.stringify(got), REAL_KEYS.anthropic);
  });
});

Deno.test("Claude Code's bearer token on /v1/messages is replaced by the key in x-api-key", async () => {
  await withProxy(async (t) => {
    const answer = await t.anthropicPost("/v1/messages", MESSAGES_BODY, {
      authorization: `Bearer ${PLACEHOLDER}`,
    });
    assertEquals(answer.status, 200);
    await answer.body?.cancel();
    const got = t.anthropic.requests[0];
    assertEquals([got.headers["x-api-key"], got.headers.authorization], [
      REAL_KEYS.anthropic,
      undefined,
    ]);
  });
});

Deno.test("hop-by-hop headers and those Connection names stay on the client's connection", async () => {
  await withProxy(async (t) => {
    const answer = await t.openaiPost("/v1/chat/completions", {
      model: "gpt-5",
      messages: [{ role: "user", content: "hi" }],
    }, { connection: "keep-alive, x-hop", "x-hop": "1", "proxy-authorization": "Basic eDp5" });
    assertEquals(answer.status, 200);
    await answer.body?.cancel();
    const got = t.openai.requests[0].headers;
    assertEquals([got["x-hop"], got["proxy-authorization"]], [undefined, undefined]);
  });
});

Deno.test("the two /v1/models are told apart by the client's headers", async () => {
  await withProxy(async (t) => {
    const anthropic = await fetch(`${t.url}/v1/models?limit=5`, { headers: ANTHROPIC_HEADERS });
    assertEquals((await anthropic.json()).data[0].type, "model");
    const openai = await fetch(`${t.url}/v1/models`, { headers: OPENAI_HEADERS });
    assertEquals((await openai.json()).object, "list");
    assertEquals(t.anthropic.requests.map((r) => [r.method, r.path]), [[
      "GET",
      "/v1/models?limit=5",
    ]]);
    assertEquals(t.anthropic.requests[0].headers["x-api-key"], REAL_KEYS.anthropic);
    assertEquals(t.openai.requests.map((r) => [r.method, r.path]), [["GET", "/v1/models"]]);
    assertEquals(t.openai.requests[0].headers.authorization, `Bearer ${REAL_KEYS.openai}`);
    assertEquals(t.usage, []);
  });
});

Deno.test("a path the endpoint does not relay is a 404 in that service's error format", async () => {
  await withProxy(async (t) => {
    const anthropic = await t.anthropicPost("/v1/messages/batches", {});
    assertEquals(anthropic.status, 404);
    const a = await anthropic.json();
    assertEquals([a.type, a.error.type], ["error", "not_found_error"]);
    assertStringIncludes(a.error.message, "see runbook.md#model-proxy-refused");
    const openai = await t.openaiPost("/v1/files", {});
    assertEquals(openai.status, 404);
    const o = await openai.json();
    assertEquals([o.error.type, o.error.code], ["invalid_request_error", "unknown_url"]);
    const get = await fetch(`${t.url}/v1/messages`, { headers: ANTHROPIC_HEADERS });
    assertEquals(get.status, 404);
    await get.body?.cancel();
    assertEquals([t.anthropic.requests, t.openai.requests], [[], []]);
  });
});

Deno.test("a service whose key the vault lacks gets the model-key-missing sentence, in its format, and nothing is sent", async () => {
  await withProxy(async (t) => {
    const anthropic = await t.anthropicPost("/v1/messages", MESSAGES_BODY);
    assertEquals(anthropic.status, 401);
    const a = await anthropic.json();
    assertEquals(a.error.type, "authentication_error");
    assert(
      a.error.message.startsWith(
        "No model key yet. Add an Anthropic or Factory API key in Settings, Accounts & Keys, then start the task again.",
      ),
      a.error.message,
    );
    assertStringIncludes(a.error.message, "ANTHROPIC_API_KEY");
    const openai = await t.openaiPost("/v1/responses", { model: "gpt-5", input: "hi" });
    assertEquals(openai.status, 200);
    await openai.body?.cancel();
    assertEquals(t.anthropic.requests, []);
  }, { keys: { anthropic: null } });
  await withProxy(async (t) => {
    const openai = await t.openaiPost("/v1/chat/completions", { model: "gpt-5", messages: [] });
    assertEquals(openai.status, 401);
    const o = await openai.json();
    assertEquals([o.error.type, o.error.code], ["invalid_request_error", "invalid_api_key"]);
    assertStringIncludes(o.error.message, "No model key yet.");
    assertStringIncludes(o.error.message, "OPENAI_API_KEY");
    assertEquals(t.openai.requests, []);
  }, { keys: { openai: null } });
});

Deno.test("a body that is not a JSON object is a 400 in the service's format, and is not sent", async () => {
  await withProxy(async (t) => {
    for (const body of ["{not json", "[1,2]", '"text"']) {
      const answer = await t.anthropicPost("/v1/messages", body);
      assertEquals(answer.status, 400, body);
      assertEquals((await answer.json()).error.type, "invalid_request_error");
    }
    const bad = new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]); // {"\xff":1}
    const answer = await fetch(`${t.url}/v1/responses`, {
      method: "POST",
      headers: OPENAI_HEADERS,
      body: bad,
    });
    assertEquals(answer.status, 400);
    assertStringIncludes((await answer.json()).error.message, "not a JSON object");
    assertEquals([t.anthropic.requests, t.openai.requests], [[], []]);
  });
});

Deno.test("a body over maxBodyBytes is a 413 in the service's format, and is not sent", async () => {
  await withProxy(async (t) => {
    const big = {
      model: "claude-opus-4-5",
      messages: [{ role: "user", content: "x".repeat(5000) }],
    };
    const answer = await t.anthropicPost("/v1/messages", big);
    assertEquals(answer.status, 413);
    const a = await answer.json();
    assertEquals(a.error.type, "request_too_large");
    assertStringIncludes(a.error.message, "see runbook.md#model-proxy-limits");
    const small = await t.anthropicPost("/v1/messages", { ...big, messages: [] });
    assertEquals(small.status, 200);
    await small.body?.cancel();
    assertEquals(t.anthropic.requests.length, 1);
  }, { maxBodyBytes: 4096 });
});

Deno.test("each body draws its bytes on the task's total: a sentence refuses it with a 429 in the service's format, null lets it on", async () => {
  const drawn: number[] = [];
  const TOTAL = "the task has written its whole allowance. see runbook.md#task-write-limit";
  await withProxy(async (t) => {
    const body = JSON.stringify({ model: "gpt-5", input: "hi" });
    const first = await t.openaiPost("/v1/responses", body);
    assertEquals(first.status, 200);
    await first.body?.cancel();
    const second = await t.openaiPost("/v1/responses", body);
    const error = await second.json();
    assertEquals([second.status, second.headers.get("retry-after")], [429, "1"]);
    assertEquals([error.error.code, error.error.message], ["rate_limit_exceeded", TOTAL]);
    assertEquals(drawn, [body.length, body.length]);
    assertEquals(t.openai.requests.length, 1);
  }, {
    drawBytes: (count) => {
      drawn.push(count);
      return drawn.length > 1 ? TOTAL : null;
    },
  });
});

Deno.test("a service that cannot be reached is a 502 in its format that names its URL", async () => {
  const dir = await Deno.makeTempDir();
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const { serveModelEndpoint } = await import("../../mod/model-proxy/mod.ts");
  const proxy = await serveModelEndpoint({
    socketPath: `${dir}/model.sock`,
    services: {
      anthropic: { baseUrl: `http://127.0.0.1:${port}`, key: () => "k" },
      openai: { baseUrl: `http://127.0.0.1:${port}`, key: () => "k" },
    },
    onUsage: () => Promise.resolve(),
    onBlocked: () => Promise.resolve(),
  });
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: proxy.socketPath } });
  try {
    const answer = await fetch("http://model.local/v1/chat/completions", {
      client,
      method: "POST",
      headers: OPENAI_HEADERS,
      body: JSON.stringify({ model: "gpt-5", messages: [] }),
    });
    assertEquals(answer.status, 502);
    const o = await answer.json();
    assertEquals(o.error.type, "server_error");
    assertStringIncludes(o.error.message, `http://127.0.0.1:${port} cannot be reached`);
    assertEquals(proxy.active, 0);
  } finally {
    client.close();
    await proxy.close();
    await Deno.remove(dir, { recursive: true });
  }
});

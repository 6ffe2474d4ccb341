/**
 * Droid's session copy on api.factory.ai, through the box's TLS, is held to what Droid sends: it
 * may make a session (`POST /api/sessions/create`) and reach that session's own paths, or the
 * session its task kept (resumed after a restart), with GET, POST, PUT or PATCH. Another session's
 * path is answered 404 as Factory answers one that is not there, and reported; the list of every
 * session and any DELETE are refused 403. Nothing refused reaches Factory. Before, every method on
 * every `/api/sessions/<id>` and `/api/sessions` itself was relayed with the owner's key.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { startFakeService } from "./fake_services.ts";
import { PLACEHOLDER, type TestOptions, withProxy } from "./proxy_kit.ts";

const FACTORY_KEY = "fk-REAL-factory-vault-key-51c0";
const OWN = "0f6c3a7e-1b2d-4c5e-9f80-112233445566";
const KEPT = "7a1b2c3d-4e5f-4a6b-8c7d-8e9fa0b1c2d3";
const OTHER = "deadbeef-0000-4000-8000-000000000001";

function tunnelled(path: string, init: { method?: string; body?: unknown } = {}): Request {
  return new Request(`https://api.factory.ai${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { "content-type": "application/json", authorization: `Bearer ${PLACEHOLDER}` },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

async function withFactory(
  body: Parameters<typeof withProxy>[0],
  options: TestOptions = {},
): Promise<string[]> {
  const factory = startFakeService(() => ({ writes: ['{"ok":true}'] }));
  try {
    await withProxy(body, {
      ...options,
      factory: options.factory === undefined
        ? { baseUrl: factory.url, key: FACTORY_KEY }
        : { ...options.factory, baseUrl: factory.url },
    });
  } finally {
    await factory.close();
  }
  return factory.requests.map((request) => `${request.method} ${request.path}`);
}

Deno.test("a session the task made, and the one it kept, are relayed with the key on the methods Droid uses", async () => {
  const sent = await withFactory(async (t) => {
    const asked: [string, string, unknown?][] = [
      ["POST", "/api/sessions/create", { id: OWN, title: "go" }],
      ["GET", `/api/sessions/${OWN}`],
      ["POST", `/api/sessions/${OWN}/droid-status`, { status: "running" }],
      ["PUT", `/api/sessions/${OWN}/work-item`, { item: 1 }],
      ["PATCH", `/api/sessions/${OWN}`, { title: "went" }],
      ["GET", `/api/sessions/${KEPT}`],
    ];
    for (const [method, path, body] of asked) {
      const answer = await t.proxy.factoryRequest(tunnelled(path, { method, body }));
      assertEquals(answer.status, 200, `${method} ${path}: ${await answer.text()}`);
    }
    assertEquals(t.blocked, []);
  }, { factorySessions: () => [KEPT] });
  assertEquals(sent, [
    "POST /api/sessions/create",
    `GET /api/sessions/${OWN}`,
    `POST /api/sessions/${OWN}/droid-status`,
    `PUT /api/sessions/${OWN}/work-item`,
    `PATCH /api/sessions/${OWN}`,
    `GET /api/sessions/${KEPT}`,
  ]);
});

Deno.test("another session's path is a 404 and reported, and the list of sessions and DELETE are refused: Factory is sent nothing", async () => {
  const sent = await withFactory(async (t) => {
    const other = [`/api/sessions/${OTHER}`, `/api/sessions/${OTHER}/droid-status`];
    for (const path of other) {
      for (const method of ["GET", "POST"]) {
        const body = method === "POST" ? { x: 1 } : undefined;
        const answer = await t.proxy.factoryRequest(tunnelled(path, { method, body }));
        const text = await answer.text();
        assertEquals(answer.status, 404, `${method} ${path}: ${text}`);
        assertStringIncludes(text, "names a session this task did not make");
        assertStringIncludes(text, "see runbook.md#model-proxy-refused");
      }
    }
    const refused: [string, string][] = [
      ["GET", "/api/sessions"],
      ["POST", "/api/sessions"],
      ["DELETE", `/api/sessions/${KEPT}`],
      ["GET", "/api/sessions/create"],
    ];
    for (const [method, path] of refused) {
      const answer = await t.proxy.factoryRequest(tunnelled(path, { method }));
      assertEquals(answer.status, 403, `${method} ${path}: ${await answer.text()}`);
    }
    assertEquals(t.blocked.map((event) => event.reason), [
      ...Array(4).fill("factory_session"),
      ...Array(4).fill("factory_path"),
    ]);
  }, { factorySessions: () => [KEPT] });
  assertEquals(sent, []);
});

Deno.test("without Factory's key a session path gets the no-key answer, as every Factory path does, and nothing is reported", async () => {
  const sent = await withFactory(async (t) => {
    const answer = await t.proxy.factoryRequest(tunnelled(`/api/sessions/${OTHER}`));
    const text = await answer.text();
    assertEquals(answer.status, 401, text);
    assertStringIncludes(text, "has no FACTORY_API_KEY");
    assertEquals(t.blocked, []);
  }, { factory: { baseUrl: "http://127.0.0.1:9", key: null } });
  assertEquals(sent, []);
});

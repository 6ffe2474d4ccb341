/**
 * Bad input on every route: malformed JSON, wrong types, unknown fields, huge bodies, invalid
 * UTF-8 and odd paths. Each gets a documented 4xx in the error shape, and the guest stays up.
 * fast-check prints the seed and the shrunk case when a property fails.
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { type GuestUnderTest, startInProcess } from "./helpers.ts";

const JSON_ROUTES: [string, string][] = [
  ["POST", "/v1/exec"],
  ["POST", "/v1/exec/stream"],
  ["PUT", "/v1/files"],
  ["POST", "/v1/files/mkdir"],
  ["POST", "/v1/files/move"],
];

const PATH_ROUTES: [string, string][] = [
  ["GET", "/v1/files?path="],
  ["GET", "/v1/files/raw?path="],
  ["PUT", "/v1/files/raw?path="],
  ["DELETE", "/v1/files?path="],
];

const DOCUMENTED = new Set([400, 404, 409, 413, 415, 429]);

async function send(
  guest: GuestUnderTest,
  method: string,
  path: string,
  body?: BodyInit,
  type = "application/json",
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${guest.exec}${path}`, {
    method,
    headers: { authorization: `Bearer ${guest.token}`, "content-type": type },
    body,
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed };
}

function assertDocumentedError(answer: { status: number; body: unknown }, what: string): void {
  assert(
    DOCUMENTED.has(answer.status),
    `${what}: status ${answer.status} ${JSON.stringify(answer.body)}`,
  );
  const error = (answer.body as { error?: { code?: unknown; message?: unknown; status?: unknown } })
    .error;
  assert(error !== undefined, `${what}: no error object in ${JSON.stringify(answer.body)}`);
  assertEquals(typeof error.code, "string", what);
  assertEquals(typeof error.message, "string", what);
  assertEquals(error.status, answer.status, what);
}

async function assertStillUp(guest: GuestUnderTest): Promise<void> {
  const health = await fetch(`${guest.exec}/v1/health`);
  assertEquals(await health.json(), { status: "ok" });
}

/** A body that must be refused: not JSON, JSON of the wrong shape, or an object with a stranger. */
const badBody = fc.oneof(
  fc.string().filter((text) => {
    try {
      JSON.parse(text);
      return false;
    } catch {
      return true;
    }
  }),
  fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer()), fc.string())
    .map((value) => JSON.stringify(value)),
  fc.record({
    command: fc.oneof(fc.integer(), fc.constant([]), fc.constant(""), fc.boolean()),
    path: fc.oneof(fc.integer(), fc.constant(null), fc.array(fc.string())),
    from: fc.integer(),
  }, { requiredKeys: [] }).map((value) => JSON.stringify(value)),
  fc.dictionary(
    fc.string({ minLength: 1 }).filter((k) => !["command", "path", "from", "to"].includes(k)),
    fc.jsonValue(),
    {
      minKeys: 1,
    },
  ).map((value) =>
    JSON.stringify({ command: ["true"], path: "x", content: "", from: "a", to: "b", ...value })
  ),
);

/** A path no route may act on: NUL, very long, encoded or plain dot-dot, absolute outside. */
const badPath = fc.oneof(
  fc.string().map((text) => `${text}\0${text}`),
  fc.integer({ min: 4097, max: 20_000 }).map((n) => "a/".repeat(Math.ceil(n / 2))),
  fc.string().map((text) => `%2e%2e/${encodeURIComponent(text)}`),
  fc.string().map((text) => `../${text}`),
  fc.constantFrom("/etc/passwd", "/", "/proc/self/environ", "..", "%2e%2e", "%2E%2E/%2e%2e"),
);

/** A query-encoded path as the literal name a JSON body would carry. */
function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return "../x";
  }
}

Deno.test("every JSON route answers malformed, mistyped and unknown-field bodies with a documented 4xx", async () => {
  const guest = await startInProcess({ maxFileBytes: 1000 });
  try {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...JSON_ROUTES), badBody, async ([method, path], body) => {
        assertDocumentedError(await send(guest, method, path, body), `${method} ${path} ${body}`);
      }),
      { numRuns: 150 },
    );
    await assertStillUp(guest);
  } finally {
    await guest.stop();
  }
});

Deno.test("every path-taking route answers NUL, very long, %2e%2e and outside paths with a 4xx", async () => {
  const guest = await startInProcess({ maxFileBytes: 1000 });
  try {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...PATH_ROUTES), badPath, async ([method, route], path) => {
        const raw = /^%2e/i.test(path);
        const query = raw ? path : encodeURIComponent(path);
        const answer = await send(
          guest,
          method,
          `${route}${query}`,
          method === "PUT" ? "x" : undefined,
          "application/octet-stream",
        );
        assertDocumentedError(answer, `${method} ${route}${JSON.stringify(path)}`);
        const literal = raw ? safeDecode(path) : path;
        const json = await send(
          guest,
          "POST",
          "/v1/files/mkdir",
          JSON.stringify({ path: literal }),
        );
        assertDocumentedError(json, `mkdir ${JSON.stringify(path)}`);
      }),
      { numRuns: 150 },
    );
    await assertStillUp(guest);
  } finally {
    await guest.stop();
  }
});

Deno.test("huge bodies are 413 payload_too_large and invalid UTF-8 is 400 on every JSON route", async () => {
  const guest = await startInProcess({ maxFileBytes: 1000 });
  try {
    const huge = new Uint8Array(3 * 1024 * 1024).fill(0x20);
    const invalid = new Uint8Array([
      0x7b,
      0x22,
      0x70,
      0x61,
      0x74,
      0x68,
      0x22,
      0x3a,
      0x22,
      0xff,
      0xfe,
      0x22,
      0x7d,
    ]);
    for (const [method, path] of JSON_ROUTES) {
      const big = await send(guest, method, path, huge);
      assertEquals(big.status, 413, `${method} ${path}`);
      assertDocumentedError(big, `${method} ${path} huge`);
      const bad = await send(guest, method, path, invalid);
      assertEquals(bad.status, 400, `${method} ${path}`);
      assertDocumentedError(bad, `${method} ${path} invalid UTF-8`);
    }
    const raw = await send(guest, "PUT", "/v1/files/raw?path=x", huge, "application/octet-stream");
    assertEquals(raw.status, 413);
    const unknownRoute = await send(guest, "GET", "/v1/nope");
    assertEquals(unknownRoute.status, 404);
    assertDocumentedError(unknownRoute, "unknown route");
    await assertStillUp(guest);
  } finally {
    await guest.stop();
  }
});

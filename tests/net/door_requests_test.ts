/**
 * What each door of the core does with a request it cannot use: a head that never ends is closed
 * after `[broker] header_timeout_ms` (408) on the broker, model and admin sockets and the portal,
 * and a request that is not HTTP (a bad request line, a 1 MB header, NUL in the path) gets the
 * `{error}` body every other refusal has. Real sockets, a real core in this process.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { ensureOwnerToken, startPortal } from "../../mod/portal/mod.ts";
import { withBox } from "../kit/mod.ts";

const TIMEOUT_MS = 300;

/** Sends `bytes` on a new connection and reads until the server closes it (or `ms` pass). */
async function exchange(
  connect: () => Promise<Deno.Conn>,
  bytes: Uint8Array,
  ms = 5000,
): Promise<{ text: string; closedAfterMs: number | null }> {
  const conn = await connect();
  const started = Date.now();
  const timer = setTimeout(() => conn.close(), ms);
  let text = "";
  let closedAfterMs: number | null = null;
  try {
    await conn.write(bytes).catch(() => 0);
    const buffer = new Uint8Array(4096);
    while (true) {
      const read = await conn.read(buffer);
      if (read === null) {
        closedAfterMs = Date.now() - started;
        break;
      }
      text += new TextDecoder().decode(buffer.subarray(0, read));
    }
  } catch {
    // Closed here at the deadline (closedAfterMs stays null), or reset by the server.
    if (Date.now() - started < ms) closedAfterMs = Date.now() - started;
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
  return { text, closedAfterMs };
}

function unix(path: string): () => Promise<Deno.Conn> {
  return () => Deno.connect({ transport: "unix", path });
}

/** The status and the parsed `{error}` body of an answer's text. */
function answerOf(text: string): { status: number; error: unknown } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  let error: unknown = null;
  try {
    error = JSON.parse(body).error;
  } catch {
    // No JSON body: error stays null.
  }
  return { status, error };
}

const PARTIAL = new TextEncoder().encode("POST /call HTTP/1.1\r\nhost: gurt\r\n");

Deno.test("a head that never ends is answered 408 and closed after header_timeout_ms, on the broker, model and admin sockets", async () => {
  await withBox({ toml: `[broker]\nheader_timeout_ms = ${TIMEOUT_MS}\n` }, async (box) => {
    const task = await box.startTask();
    const doors = {
      broker: task.socket,
      model: `${box.home}/tasks/${task.id}/model.sock`,
      admin: adminSocketPath(box.home),
    };
    for (const [door, path] of Object.entries(doors)) {
      const { text, closedAfterMs } = await exchange(unix(path), PARTIAL);
      assert(closedAfterMs !== null, `${door}: still open after 5 s`);
      assert(closedAfterMs >= TIMEOUT_MS - 50, `${door}: closed after ${closedAfterMs} ms`);
      const answer = answerOf(text);
      assertEquals(answer.status, 408, `${door}: ${text}`);
      assertStringIncludes(String(answer.error), `within ${TIMEOUT_MS} ms`);
      assertStringIncludes(String(answer.error), "see runbook.md#door-timeout");
    }
  });
});

Deno.test("the portal closes a head that never ends after its header timeout", async () => {
  await withBox({}, async (box) => {
    const portal = await startPortal({
      listen: "127.0.0.1:0",
      socket: adminSocketPath(box.home),
      token: await ensureOwnerToken(box.home),
      log: (line) => box.logs.push(line),
      headerTimeoutMs: TIMEOUT_MS,
    });
    try {
      const [hostname, port] = portal.addr.split(":");
      const { text, closedAfterMs } = await exchange(
        () => Deno.connect({ hostname, port: Number(port) }),
        new TextEncoder().encode(`GET / HTTP/1.1\r\nhost: ${portal.addr}\r\n`),
      );
      assert(closedAfterMs !== null, "the portal held the connection for 5 s");
      assertEquals(answerOf(text).status, 408, text);
    } finally {
      await portal.close();
    }
  });
});

Deno.test("a request that is not HTTP gets the {error} body: a bad request line, a 1 MB header, NUL in the path", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    const cases: [string, Uint8Array, number][] = [
      ["a bad request line", new TextEncoder().encode("HELLO\r\n\r\n"), 400],
      [
        "a 1 MB header",
        new TextEncoder().encode(
          `GET /task HTTP/1.1\r\nhost: gurt\r\nx: ${"a".repeat(1 << 20)}\r\n\r\n`,
        ),
        431,
      ],
      [
        "NUL in the path",
        new TextEncoder().encode("GET /ta\0sk HTTP/1.1\r\nhost: gurt\r\n\r\n"),
        400,
      ],
    ];
    for (const path of [task.socket, adminSocketPath(box.home)]) {
      for (const [what, bytes, status] of cases) {
        const { text } = await exchange(unix(path), bytes);
        const answer = answerOf(text);
        assertEquals(answer.status, status, `${what}: ${text}`);
        assert(typeof answer.error === "string" && answer.error.length > 0, `${what}: ${text}`);
      }
    }
  });
});

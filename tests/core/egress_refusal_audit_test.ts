/**
 * Every refusal of a task's egress proxy is audited, whatever the task sent (issue 28): a CONNECT
 * with an empty host was journalled as net.blocked with host "" but its audit record failed
 * validation ("host: Too small") and was never written. Against a real core, an empty host and
 * garbage hosts each make a net_blocked record, and `gurt audit verify` stays ok.
 */
import { assert, assertEquals } from "../assert.ts";
import { gurt, startBox } from "../kit/mod.ts";

const latin1 = (text: string) => new Uint8Array([...text].map((char) => char.charCodeAt(0)));

const REQUESTS: Uint8Array[] = [
  latin1("CONNECT :443 HTTP/1.1\r\n\r\n"),
  latin1("\r\n\r\n"),
  latin1("CONNECT \xff\xfe:443 HTTP/1.1\r\n\r\n"),
  latin1("CONNECT a\x00\x1b[2J:443 HTTP/1.1\r\n\r\n"),
  latin1(`CONNECT ${"x".repeat(300)}:443 HTTP/1.1\r\n\r\n`),
  latin1("GET http://:80/ HTTP/1.1\r\n\r\n"),
  new Uint8Array([5, 1, 0, 5, 1, 0, 3, 0, 1, 187]),
];

/** Sends `bytes` to the proxy at `path` and reads until it closes. */
async function refusedBy(path: string, bytes: Uint8Array): Promise<void> {
  const conn = await Deno.connect({ transport: "unix", path });
  try {
    let offset = 0;
    while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
    const buffer = new Uint8Array(4096);
    while (await conn.read(buffer) !== null) {
      // Until the proxy closes.
    }
  } catch {
    // A reset ends it too.
  } finally {
    conn.close();
  }
}

Deno.test("a task's CONNECT with an empty host, and garbage hosts, each make a net_blocked audit record, and gurt audit verify stays ok", async () => {
  const box = await startBox();
  let closed = false;
  try {
    const task = await box.startTask();
    const socket = `${box.home}/tasks/${task.id}/egress.sock`;
    for (const bytes of REQUESTS) await refusedBy(socket, bytes);
    // The proxy answers a refusal only once its record is written (or its writing failed).
    const events = (await box.records()).map((record) => record.event).filter((event) =>
      event.type === "net_blocked"
    );
    assertEquals(
      events.length,
      REQUESTS.length,
      `${JSON.stringify(events)}\n${box.logs.join("\n")}`,
    );
    for (const event of events) {
      assertEquals(event.task, task.id, JSON.stringify(event));
      assert(["bad_request", "not_listed"].includes(event.reason), JSON.stringify(event));
      assert(/^[\x20-\x7e]{1,255}$/.test(event.host), JSON.stringify(event));
    }
    assertEquals(events.map((event) => event.host), [
      "(none)",
      "(none)",
      "xn--vdab",
      "(none)",
      "x".repeat(255),
      "(none)",
      "(none)",
    ]);
    assertEquals(box.logs.filter((line) => line.includes("not audited")), []);
    // The core alone is closed: box.close() would remove the home.
    await box.core.close();
    closed = true;
    const verify = await gurt(["--home", box.home, "audit", "verify"]);
    assertEquals(verify.code, 0, verify.stdout + verify.stderr);
    assert(verify.stdout.startsWith("audit: ok, "), verify.stdout);
  } finally {
    if (!closed) await box.core.close();
    await Deno.remove(box.home, { recursive: true }).catch(() => {});
  }
});

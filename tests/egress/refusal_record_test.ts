/**
 * Every refusal the proxy tells its caller makes a valid net_blocked audit event, whatever the
 * client sent (issue 28: a CONNECT with an empty host was refused with host "", which the audit
 * record refuses, so it was never audited): an empty or missing host is `(none)`, any other host
 * printable ASCII of at most 255 characters.
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { auditEvent } from "../../mod/audit/mod.ts";
import type { BlockedEvent } from "../../mod/egress/mod.ts";
import { exchange, startProxy, type TestProxy } from "./egress_kit.ts";

/** Whether `event` makes a net_blocked audit event the schema takes. */
function audits(event: BlockedEvent): boolean {
  return auditEvent.safeParse({ type: "net_blocked", task: "t1", ...event }).success;
}

const latin1 = (text: string) => new Uint8Array([...text].map((char) => char.charCodeAt(0)));

/** Requests whose host is empty, missing or garbage, over HTTP and SOCKS5. */
const GARBAGE: [string, Uint8Array][] = [
  ["CONNECT with an empty host", latin1("CONNECT :443 HTTP/1.1\r\n\r\n")],
  ["CONNECT with no target", latin1("CONNECT  HTTP/1.1\r\n\r\n")],
  ["an empty request line", latin1("\r\n\r\n")],
  ["a URL with an empty host", latin1("GET http://:80/ HTTP/1.1\r\n\r\n")],
  ["bytes past ASCII", latin1("CONNECT \xff\xfe\x80:443 HTTP/1.1\r\n\r\n")],
  ["a NUL and ESC", latin1("CONNECT a\x00\x1b[2J:443 HTTP/1.1\r\n\r\n")],
  ["an open bracket", latin1("CONNECT [::1:443 HTTP/1.1\r\n\r\n")],
  ["a long host", latin1(`CONNECT ${"x".repeat(300)}.example:443 HTTP/1.1\r\n\r\n`)],
  ["a percent-encoded host", latin1("CONNECT %00%0a:443 HTTP/1.1\r\n\r\n")],
  ["SOCKS5 without no-auth", new Uint8Array([5, 1, 2])],
  ["SOCKS5 with an empty name", new Uint8Array([5, 1, 0, 5, 1, 0, 3, 0, 1, 187])],
  ["SOCKS5 with a name not UTF-8", new Uint8Array([5, 1, 0, 5, 1, 0, 3, 2, 0xff, 0xfe, 1, 187])],
  ["SOCKS5 with control bytes", new Uint8Array([5, 1, 0, 5, 1, 0, 3, 3, 0, 10, 13, 1, 187])],
  ["SOCKS5 BIND", new Uint8Array([5, 1, 0, 5, 2, 0, 3, 0, 1, 187])],
];

async function events(proxy: TestProxy, bytes: Uint8Array): Promise<BlockedEvent[]> {
  const before = proxy.events.length;
  await exchange(proxy, bytes);
  return proxy.events.slice(before);
}

Deno.test("a request with an empty, missing or garbage host is recorded with a host the audit record takes: (none), or printable ASCII of at most 255 characters", async () => {
  const proxy = await startProxy({ hosts: ["a.test"] });
  try {
    const seen: [string, BlockedEvent[]][] = [];
    for (const [what, bytes] of GARBAGE) seen.push([what, await events(proxy, bytes)]);
    for (const [what, recorded] of seen) {
      assertEquals(recorded.length, 1, what);
      assert(audits(recorded[0]), `${what}: ${JSON.stringify(recorded[0])} is not auditable`);
      assert(/^[\x20-\x7e]{1,255}$/.test(recorded[0].host), `${what}: ${recorded[0].host}`);
    }
    const hosts = Object.fromEntries(seen.map(([what, recorded]) => [what, recorded[0].host]));
    assertEquals(hosts["CONNECT with an empty host"], "(none)");
    assertEquals(hosts["an empty request line"], "(none)");
    assertEquals(hosts["SOCKS5 with an empty name"], "(none)");
    assertEquals(hosts["bytes past ASCII"], "???");
  } finally {
    await proxy.close();
  }
});

Deno.test("whatever target a CONNECT names, its refusal is auditable (property)", async () => {
  const proxy = await startProxy({ hosts: ["a.test"] });
  try {
    const target = fc.uint8Array({ minLength: 0, maxLength: 300 });
    await fc.assert(
      fc.asyncProperty(target, async (bytes) => {
        const request = new Uint8Array([
          ...latin1("CONNECT "),
          ...bytes,
          ...latin1(" HTTP/1.1\r\n\r\n"),
        ]);
        for (const event of await events(proxy, request)) {
          assert(audits(event), JSON.stringify(event));
        }
      }),
      { numRuns: 200 },
    );
  } finally {
    await proxy.close();
  }
});

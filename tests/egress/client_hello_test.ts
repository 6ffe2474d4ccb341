/**
 * The ClientHello reader on real ClientHellos (Deno's own TLS client, captured by a TCP listener),
 * whole, cut short, and split over two records as a client may send it.
 */
import { assertEquals } from "../assert.ts";
import { judgeFirstBytes, readFirstBytes } from "../../mod/egress/client_hello.ts";

/** The first bytes Deno's TLS client sends when it connects naming `hostname`. */
async function capturedHello(hostname: string): Promise<Uint8Array> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  // Deno's TLS handshakes lazily: ask for it, or no ClientHello is sent.
  const client = Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port })
    .then((tcp) => Deno.startTls(tcp, { hostname }))
    .then(async (tls) => {
      await tls.handshake().catch(() => {});
      tls.close();
    })
    .catch(() => {});
  const conn = await listener.accept();
  const buffer = new Uint8Array(64 * 1024);
  let have = 0;
  // Read until the record (5-byte header and its length) is whole.
  while (have < 5 || have < 5 + ((buffer[3] << 8) | buffer[4])) {
    const read = await conn.read(buffer.subarray(have));
    if (read === null) break;
    have += read;
  }
  conn.close();
  listener.close();
  await client;
  return buffer.slice(0, have);
}

/** The same handshake message split over two records after `at` bytes. */
function splitRecords(hello: Uint8Array, at: number): Uint8Array {
  const message = hello.subarray(5);
  const record = (
    part: Uint8Array,
  ) => [0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff, ...part];
  return new Uint8Array([...record(message.subarray(0, at)), ...record(message.subarray(at))]);
}

const name = { kind: "name", host: "good.test" } as const;

Deno.test("the SNI of a real ClientHello is read, and judged against the tunnel's host", async () => {
  const hello = await capturedHello("good.test");
  assertEquals(readFirstBytes(hello), { tls: true, names: ["good.test"] });
  assertEquals(judgeFirstBytes(hello, { host: name, port: 443 }), { ok: true });
  assertEquals(judgeFirstBytes(hello, { host: { kind: "name", host: "other.test" }, port: 443 }), {
    reason: "sni_mismatch",
  });
  assertEquals(
    judgeFirstBytes(hello, { host: { kind: "ip", host: "127.0.0.1", family: 4 }, port: 443 }),
    {
      reason: "sni_mismatch",
    },
  );
});

Deno.test("a ClientHello without SNI passes only to an address", async () => {
  const hello = await capturedHello("127.0.0.1");
  assertEquals(readFirstBytes(hello), { tls: true, names: [] });
  assertEquals(judgeFirstBytes(hello, { host: name, port: 443 }), { reason: "no_sni" });
  assertEquals(
    judgeFirstBytes(hello, { host: { kind: "ip", host: "127.0.0.1", family: 4 }, port: 443 }),
    {
      ok: true,
    },
  );
});

Deno.test("a ClientHello cut short asks for more, and one split over two records is read whole", async () => {
  const hello = await capturedHello("good.test");
  assertEquals(readFirstBytes(hello.subarray(0, 3)), { need: 5 });
  assertEquals(readFirstBytes(hello.subarray(0, 100)), { need: hello.length });
  for (const at of [1, 4, 40, hello.length - 10]) {
    const split = splitRecords(hello, at);
    assertEquals(readFirstBytes(split), { tls: true, names: ["good.test"] }, `split at ${at}`);
    assertEquals("need" in readFirstBytes(split.subarray(0, split.length - 1)), true);
  }
});

Deno.test("bytes that are not TLS are left to be read as a plain request off port 443, and refused on it", () => {
  const plain = new TextEncoder().encode("SSH-2.0-client\r\n");
  assertEquals(judgeFirstBytes(plain, { host: name, port: 22 }), { plain: true });
  assertEquals(judgeFirstBytes(plain, { host: name, port: 443 }), { reason: "not_tls" });
  const notHello = new Uint8Array([0x16, 0x03, 0x01, 0x00, 0x04, 0x02, 0x00, 0x00, 0x00]);
  assertEquals(judgeFirstBytes(notHello, { host: name, port: 8443 }), { reason: "not_tls" });
});

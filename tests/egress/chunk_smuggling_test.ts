/**
 * Smuggling in a chunked body's framing: the proxy reads the chunks one way (a bare LF ends a line,
 * a chunk's data ends with a line end, trailers run to a blank line) and a lax origin another (any
 * two bytes after a chunk's data, one line after the last chunk), so bytes the proxy sent as one
 * body reached the origin as a second request for another host. The proxy now sends a chunked body
 * re-framed as it read it (sizes and CRLFs its own, no extension, no trailer): the origin reads
 * one request, in absolute form and in a tunnel, and the body it reads is the client's data.
 */
import { assertEquals } from "../assert.ts";
import {
  connectProxy,
  exchange,
  openTunnel,
  readToEnd,
  startLocalProxy,
  startRawOrigin,
  text,
  writeAll,
} from "./egress_kit.ts";
import { startLaxOrigin } from "./lax_origin.ts";

const SMUGGLED = "GET /smuggled HTTP/1.1\r\nHost: evil.example\r\n\r\n";

/** Chunked bodies that hide SMUGGLED from the proxy but not from a lax origin. */
function smugglingBodies(): Record<string, string> {
  // The proxy reads `5\n` `hello` `\n` then a 0x30-byte chunk; the lax origin skips `hello\n3`,
  // reads `0\n` as the last chunk and the `\n` after it as its end, then SMUGGLED.
  const data = `\n${SMUGGLED}`.padEnd(0x30, "x");
  return {
    "a request in the trailers": `0\r\nX-T: 1\r\n${SMUGGLED}`,
    "a bare LF after a chunk's data": `5\nhello\n30\n${data}\r\n0\r\n\r\n`,
  };
}

Deno.test("a chunked body whose framing a lax origin reads differently carries no second request to it, in absolute form or in a CONNECT or SOCKS5 tunnel", async () => {
  const origin = startLaxOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    const host = `plain.test:${origin.port}`;
    const head = (target: string) =>
      `POST ${target} HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const seen: string[] = [];
    const expected: string[] = [];
    for (const [what, body] of Object.entries(smugglingBodies())) {
      for (const way of ["absolute", "CONNECT", "SOCKS5"]) {
        const before = origin.requests.length;
        let answer: string;
        if (way === "absolute") {
          answer = text(await exchange(proxy, `${head(`http://${host}/`)}${body}`));
        } else {
          const conn = await openTunnel(proxy, { host: "plain.test", port: origin.port }, {
            socks: way === "SOCKS5",
          });
          await writeAll(conn, `${head("/")}${body}`);
          answer = text(await readToEnd(conn));
          conn.close();
        }
        seen.push(
          `${what} (${way}): ${answer.split("\r\n")[0]}; the origin read ${
            origin.requests.slice(before).join(", ")
          }`,
        );
        expected.push(`${what} (${way}): HTTP/1.1 200 OK; the origin read POST / host=${host}`);
      }
    }
    assertEquals(seen, expected);
    assertEquals(proxy.events, []);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("the origin gets a chunked body's data re-framed: the proxy's sizes and CRLFs, no chunk extension, no trailer", async () => {
  const origin = startRawOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    const host = `plain.test:${origin.port}`;
    const head =
      `POST http://${host}/ HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const forwarded =
      `POST / HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`;
    const conn = await connectProxy(proxy);
    await writeAll(
      conn,
      `${head}04;ext="a b"\r\nWiki\r\n5\nhello\nA \t;x\r\n0123456789\r\n0;last\r\nTrailer: x\r\n\r\nNEXT`,
    );
    const expected = `${forwarded}4\r\nWiki\r\n5\r\nhello\r\na\r\n0123456789\r\n0\r\n\r\n`;
    assertEquals(await origin.waitFor(expected.length), expected);
    conn.close();
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("an HTTP/1.0 request with Transfer-Encoding is refused as bad_request, since an origin that frames HTTP/1.0 by Content-Length alone reads its chunks as a second request", async () => {
  const origin = startLaxOrigin({ http10Chunked: false });
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    const host = `plain.test:${origin.port}`;
    // The proxy sends the size line `cafe`, which such an origin reads as a request line, and
    // the chunk's data as that request's fields.
    const data = "Host: evil.example\r\n\r\n".padEnd(0xcafe, "y");
    const body = `cafe\r\n${data}\r\n0\r\n\r\n`;
    const head = (target: string) =>
      `POST ${target} HTTP/1.0\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const absolute = text(await exchange(proxy, `${head(`http://${host}/`)}${body}`));
    const conn = await openTunnel(proxy, { host: "plain.test", port: origin.port });
    await writeAll(conn, `${head("/")}${body}`);
    const tunnelled = text(await readToEnd(conn));
    conn.close();
    assertEquals(
      [absolute, tunnelled].map((answer) => /reason=(\w+)/.exec(answer)?.[1] ?? answer),
      ["bad_request", "bad_request"],
    );
    assertEquals([origin.bytes, origin.requests], [0, []]);
    assertEquals(proxy.events.map((event) => event.reason), ["bad_request", "bad_request"]);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

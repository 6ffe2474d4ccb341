/**
 * The request-head reader without I/O: a Connection header may not name the fields that frame or
 * address a request (issue 18's attack review: naming Content-Length dropped it from the forwarded
 * head, so the body reached the origin as a second request), and the one plain request a tunnel
 * that is not TLS may carry is in origin form, told from other protocols by its first line.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  mayBeRequest,
  parseRequestHead,
  parseTunnelRequest,
} from "../../mod/egress/request_head.ts";

const absolute = (fields: string) => `POST http://a.test/x HTTP/1.1\r\n${fields}\r\n`;
const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("a Connection header that names Content-Length, Transfer-Encoding or Host is refused, in any case and list, in either form", () => {
  const refused = [
    "Connection: content-length\r\nContent-Length: 3\r\n",
    "Connection: Content-Length\r\nContent-Length: 3\r\n",
    "Connection: keep-alive, TRANSFER-ENCODING\r\nTransfer-Encoding: chunked\r\n",
    "Connection: close\r\nConnection:  host \r\nHost: a.test\r\n",
    "Connection: x-a,host,x-b\r\n",
  ];
  for (const fields of refused) {
    const head = parseRequestHead(absolute(fields));
    assert("problem" in head, `${JSON.stringify(fields)} was taken`);
    assert(head.problem.includes("Connection header names"), head.problem);
    const inTunnel = parseTunnelRequest(`POST /x HTTP/1.1\r\n${fields}\r\n`);
    assert("problem" in inTunnel, `${JSON.stringify(fields)} was taken in a tunnel`);
  }
});

Deno.test("the Connection headers clients send are taken, and the fields they name dropped, never the framing", () => {
  for (const value of ["keep-alive", "close", "Keep-Alive, Upgrade", "keep-alive, x-hop"]) {
    const head = parseRequestHead(
      absolute(`Connection: ${value}\r\nContent-Length: 3\r\nX-Hop: 1\r\nX-End: 2\r\n`),
    );
    assert(!("problem" in head) && head.kind === "absolute", `${value}: ${JSON.stringify(head)}`);
    const forwarded = head.forward("Host: a.test");
    assertEquals(forwarded.split("\r\n")[0], "POST /x HTTP/1.1");
    assert(forwarded.includes("\r\nContent-Length: 3\r\n"), forwarded);
    assert(forwarded.includes("\r\nX-End: 2\r\n"), forwarded);
    assertEquals(forwarded.includes("X-Hop"), !value.includes("x-hop"), forwarded);
    assert(forwarded.endsWith("\r\nConnection: close\r\n\r\n"), forwarded);
    assertEquals(forwarded.match(/Connection/g)?.length, 1, forwarded);
  }
});

Deno.test("a request in a tunnel is taken in origin form only, with its Host header and framing as in absolute form", () => {
  const ok = parseTunnelRequest("GET /p?q=1 HTTP/1.1\r\nHost: a.test:8080\r\n\r\n");
  assert(!("problem" in ok), JSON.stringify(ok));
  assertEquals(ok.hostHeader, "a.test:8080");
  assertEquals(ok.body, null);
  assertEquals(
    ok.forward("Host: unused"),
    "GET /p?q=1 HTTP/1.1\r\nHost: a.test:8080\r\nConnection: close\r\n\r\n",
  );
  const bare = parseTunnelRequest("GET / HTTP/1.0\r\n\r\n");
  assert(!("problem" in bare));
  assertEquals(bare.hostHeader, null);
  assertEquals(
    bare.forward("Host: a.test"),
    "GET / HTTP/1.0\r\nHost: a.test\r\nConnection: close\r\n\r\n",
  );
  for (
    const head of [
      "GET http://evil.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
      "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n",
      "OPTIONS * HTTP/1.1\r\nHost: a.test\r\n\r\n",
      "PRI * HTTP/2.0\r\n\r\n",
      "GET / HTTP/1.1\r\nHost: a.test\r\nHost: evil.test\r\n\r\n",
      "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
    ]
  ) {
    assert("problem" in parseTunnelRequest(head), `${JSON.stringify(head)} was taken`);
  }
});

Deno.test("the first bytes of a tunnel may be a request only while they read like a request line", () => {
  for (
    const start of [
      "G",
      "GET / HTTP/1.1",
      "GET / HTTP/1.1\r",
      "GET / HTTP/1.1\r\nHost: a\r\n",
      "PRI * HTTP/2.0\r\n",
    ]
  ) {
    assertEquals(mayBeRequest(bytes(start)), true, start);
  }
  for (
    const start of [
      "SSH-2.0-OpenSSH_9.6\r\n",
      "\r\nGET / HTTP/1.1\r\n",
      "GET / HTTP/1.1\nHost: evil.test\n\n",
      "GET / HTTP/1.1\r\r\n",
      "EHLO a.test\r\n",
      "GET /\r\n",
    ]
  ) {
    assertEquals(mayBeRequest(bytes(start)), false, JSON.stringify(start));
  }
  assertEquals(mayBeRequest(new Uint8Array([0, 0, 0, 8, 4, 210, 22, 47])), false);
  assertEquals(mayBeRequest(new Uint8Array([0x47, 0x45, 0x54, 0x20, 0xff])), false);
});

Deno.test("a head with a bare LF, a bare CR, a NUL, another control character or a folded line is refused in every form, and says which", () => {
  const cases: [string, string][] = [
    ["X-A: a\nHost: evil.test\r\n", "a bare LF"],
    ["X-A: a\rHost: evil.test\r\n", "a bare CR"],
    ["X-A: a\0b\r\n", "a NUL"],
    ["X-A: a\x1bb\r\n", "a control character"],
    ["X-A: a\x7fb\r\n", "a control character"],
    ["X-A: a\r\n b\r\n", "folded header line"],
    ["X-A: a\r\n\tHost: evil.test\r\n", "folded header line"],
  ];
  for (const [fields, what] of cases) {
    for (
      const head of [
        parseRequestHead(absolute(fields)),
        parseRequestHead(`CONNECT a.test:443 HTTP/1.1\r\n${fields}\r\n`),
        parseTunnelRequest(`GET / HTTP/1.1\r\n${fields}\r\n`),
      ]
    ) {
      assert("problem" in head, `${JSON.stringify(fields)} was taken`);
      assert(head.problem.includes(what), head.problem);
    }
  }
  const line = parseRequestHead("GET http://a.test/\nx HTTP/1.1\r\n\r\n");
  assert("problem" in line && line.problem.includes("a bare LF"), JSON.stringify(line));
  const tab = parseRequestHead(absolute("X-A: a\tb\r\nX-B: caf\u00e9\r\n"));
  assert(!("problem" in tab), JSON.stringify(tab));
});

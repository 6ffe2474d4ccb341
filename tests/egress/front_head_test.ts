/**
 * The heads that smuggle past the egress proxy (issue 34), sent inside an intercepted tunnel to a
 * model host. The TLS front does not read heads itself: node:http (llhttp, strict) does, under
 * mod/net's guarded server, and hands the task's model endpoint a Request, whose headers the
 * endpoint copies into a request of its own (a Headers value can hold no CR, LF or NUL). So the one
 * question is what that parser does, and this test pins it: a bare CR, a NUL, a fold, a second Host,
 * Content-Length with Transfer-Encoding and a bare LF are a 400 that no handler sees. (Deno.serve,
 * the front's server before, read a lone bare LF as a line's end, as RFC 9112 §2.2 lets it.)
 */
import { assertEquals, assertThrows } from "../assert.ts";
import { openBoxCa, SYSTEM_ROOTS } from "../../mod/box-ca/mod.ts";
import { openTlsFront } from "../../mod/egress/mod.ts";
import { readHead, startProxy, writeAll } from "./egress_kit.ts";
import { caHome } from "../box-ca/ca_kit.ts";

const HOST = "api.anthropic.com";

Deno.test("inside an intercepted tunnel, the front's parser refuses a bare CR, a NUL, a fold, a smuggled Host, a smuggled Transfer-Encoding and a lone bare LF before any handler", async () => {
  const home = await caHome();
  const ca = await openBoxCa(home.ca, { systemRoots: SYSTEM_ROOTS });
  const front = openTlsFront({ leaf: (host) => ca.leaf(host), log: () => {} });
  const seen: string[] = [];
  const proxy = await startProxy({}, {
    intercept: (host, port) =>
      host === HOST && port === 443
        ? (client, first) =>
          front.take(client, {
            host,
            first,
            handle: async (request) => {
              await request.arrayBuffer();
              seen.push(JSON.stringify([...request.headers].filter(([name]) => name !== "host")));
              return new Response("ok");
            },
          })
        : null,
  });
  /** Sends `head` in a new tunnel to HOST; the answer's status line. */
  const send = async (head: string): Promise<string> => {
    const tcp = await Deno.connect({ hostname: "127.0.0.1", port: proxy.port });
    await writeAll(tcp, `CONNECT ${HOST}:443 HTTP/1.1\r\n\r\n`);
    assertEquals((await readHead(tcp)).split("\r\n")[0], "HTTP/1.1 200 Connection Established");
    const tls = await Deno.startTls(tcp, { hostname: HOST, caCerts: [ca.caPem] });
    try {
      await writeAll(tls, head);
      return (await readHead(tls)).split("\r\n")[0];
    } finally {
      tls.close();
    }
  };
  try {
    const host = `Host: ${HOST}`;
    const body = "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: evil.example\r\n\r\n";
    const refused = {
      "a bare LF before the real Host":
        `GET / HTTP/1.1\r\nX-A: a\nHost: evil.example\r\n${host}\r\n\r\n`,
      "a bare LF before Transfer-Encoding, a second request in the body":
        `POST / HTTP/1.1\r\n${host}\r\nX-A: a\nTransfer-Encoding: chunked\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
      "a NUL": `GET / HTTP/1.1\r\n${host}\r\nX-A: a\0Host: evil.example\r\n\r\n`,
      "a folded line": `GET / HTTP/1.1\r\n${host}\r\nX-A: a\r\n Host: evil.example\r\n\r\n`,
      "a bare CR": `GET / HTTP/1.1\r\nX-A: a\rHost: evil.example\r\n${host}\r\n\r\n`,
    };
    const answers: Record<string, string> = {};
    for (const [what, head] of Object.entries(refused)) answers[what] = await send(head);
    assertEquals(
      answers,
      Object.fromEntries(Object.keys(refused).map((what) => [what, "HTTP/1.1 400 Bad Request"])),
    );
    assertEquals(seen, []);
    // A bare LF alone: refused as well.
    assertEquals(
      await send(`GET / HTTP/1.1\r\n${host}\r\nX-A: a\nX-B: b\r\nConnection: close\r\n\r\n`),
      "HTTP/1.1 400 Bad Request",
    );
    assertEquals(seen, []);
    // A plain request is served.
    assertEquals(
      await send(`GET / HTTP/1.1\r\n${host}\r\nX-A: a\r\nConnection: close\r\n\r\n`),
      "HTTP/1.1 200 OK",
    );
    assertEquals(seen, [JSON.stringify([["connection", "close"], ["x-a", "a"]])]);
    // What the endpoint sends on is built from Headers, which hold none of these characters.
    for (const value of ["a\nHost: evil.example", "a\rb", "a\0b"]) {
      assertThrows(() => new Headers({ "x-a": value }), TypeError);
    }
  } finally {
    await proxy.close();
    await front.close();
    await home.remove();
  }
});

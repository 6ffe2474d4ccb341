/**
 * Every way round the egress proxy that issue 18 names, refused with the reason the caller
 * records as net.blocked, and with nothing reaching the origin: a host not listed, each odd
 * spelling of an address, a listed name resolving to loopback, metadata, private or the box's own
 * addresses, a Host header naming another host (in a URL or in a tunnel), a tunnel whose TLS
 * names another host or none, a tunnel that is neither TLS nor one plain request (any bytes on
 * port 443), a Connection header naming a framing field, and requests the proxy does not take.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startTlsServer } from "../runtime/tls_fixture.ts";
import { until } from "../kit/mod.ts";
import {
  connectProxy,
  exchange,
  openTunnel,
  readToEnd,
  sendConnect,
  startLocalProxy,
  startProxy,
  startRawOrigin,
  text,
  writeAll,
} from "./egress_kit.ts";

Deno.test("a host not on the list is answered 403 with a body that says so and that retrying will not help", async () => {
  const proxy = await startProxy({ hosts: ["other.example"] });
  try {
    const answer = text(await exchange(proxy, "CONNECT api.example.com:443 HTTP/1.1\r\n\r\n"));
    const [head, body] = answer.split("\r\n\r\n");
    assertStringIncludes(head, "HTTP/1.1 403 Forbidden\r\n");
    assertStringIncludes(head, "X-Gurt-Egress: blocked; reason=not_listed");
    assertEquals(
      body,
      "gurt egress: api.example.com:443 is not on this task's host list; retrying will not help. Ask the owner to add it (gurt task start --hosts). see runbook.md#egress-blocked\n",
    );
    assertEquals(proxy.events, [{ host: "api.example.com", port: 443, reason: "not_listed" }]);
  } finally {
    await proxy.close();
  }
});

Deno.test("a name is matched by *.x.y under x.y, never x.y itself, and on 443 and 80 only unless a port is listed", async () => {
  const proxy = await startProxy({ hosts: ["*.npmjs.org", "b.example:8443"] });
  try {
    for (const target of ["npmjs.org:443", "registry.npmjs.org:8080", "b.example:443"]) {
      assertStringIncludes(
        text(await exchange(proxy, `CONNECT ${target} HTTP/1.1\r\n\r\n`)),
        "403 Forbidden",
      );
    }
    assertEquals(proxy.events.map((event) => event.reason), [
      "not_listed",
      "not_listed",
      "not_listed",
    ]);
  } finally {
    await proxy.close();
  }
});

Deno.test("every odd spelling of 127.0.0.1 is refused as ip_literal even with 127.0.0.1 listed, which itself passes", async () => {
  const origin = startRawOrigin();
  const proxy = await startProxy({
    hosts: [`127.0.0.1:${origin.port}`],
    allowPrivate: ["127.0.0.1"],
  });
  const odd = [
    "2130706433",
    "0x7f.1",
    "0x7f000001",
    "0177.0.0.1",
    "017700000001",
    "127.1",
    "127.0.1",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[::127.0.0.1]",
    "[64:ff9b::127.0.0.1]",
  ];
  try {
    for (const host of odd) {
      const viaConnect = text(
        await exchange(proxy, `CONNECT ${host}:${origin.port} HTTP/1.1\r\n\r\n`),
      );
      assertStringIncludes(viaConnect, "reason=ip_literal", host);
      const viaGet = text(
        await exchange(proxy, `GET http://${host}:${origin.port}/ HTTP/1.1\r\n\r\n`),
      );
      assertStringIncludes(viaGet, "reason=ip_literal", host);
    }
    assertEquals(
      proxy.events,
      odd.flatMap((host) => [0, 1].map(() => ({ host, port: origin.port, reason: "ip_literal" }))),
    );
    (await openTunnel(proxy, { host: "127.0.0.1", port: origin.port })).close();
    assertEquals(origin.received.length, 1, "only the listed literal reached the origin");
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("an address that is not listed is refused as ip_literal, IPv4 and IPv6 alike", async () => {
  const proxy = await startProxy({ hosts: ["10.0.0.5:8080"] });
  try {
    for (const target of ["10.0.0.5:443", "10.0.0.6:8080", "[::1]:8080", "[2001:db8::1]:443"]) {
      assertStringIncludes(
        text(await exchange(proxy, `CONNECT ${target} HTTP/1.1\r\n\r\n`)),
        "reason=ip_literal",
      );
    }
    assertEquals(proxy.events.map((event) => `${event.host}:${event.port}`), [
      "10.0.0.5:443",
      "10.0.0.6:8080",
      "[::1]:8080",
      "[2001:db8::1]:443",
    ]);
  } finally {
    await proxy.close();
  }
});

Deno.test("a listed name that resolves to loopback, metadata, a private or a link-local address is refused", async () => {
  const cases: [string, string][] = [
    ["loop.test", "127.0.0.1"],
    ["loop6.test", "::1"],
    ["meta.test", "169.254.169.254"],
    ["meta6.test", "fd00:ec2::254"],
    ["lan.test", "10.1.2.3"],
    ["home.test", "192.168.1.1"],
    ["link.test", "169.254.10.10"],
    ["ula.test", "fd12:3456::1"],
    ["cgnat.test", "100.64.0.1"],
  ];
  const proxy = await startProxy({
    hosts: cases.map(([name]) => name),
    resolve: Object.fromEntries(cases),
  });
  try {
    for (const [name] of cases) {
      const answer = text(await exchange(proxy, `CONNECT ${name}:443 HTTP/1.1\r\n\r\n`));
      assertStringIncludes(answer, "reason=private_address", name);
      assertStringIncludes(answer, "retrying will not help");
    }
    assertEquals(
      proxy.events,
      cases.map(([host]) => ({ host, port: 443, reason: "private_address" })),
    );
  } finally {
    await proxy.close();
  }
});

Deno.test("allow_private_hosts lets a host reach a private address, but never a metadata address", async () => {
  const origin = startRawOrigin();
  const proxy = await startProxy({
    hosts: [`lan.test:${origin.port}`, "meta.test", "meta6.test"],
    resolve: {
      "lan.test": "127.0.0.1",
      "meta.test": "169.254.169.254",
      "meta6.test": "fd00:ec2::254",
    },
    allowPrivate: ["lan.test", "meta.test", "meta6.test"],
  });
  try {
    (await openTunnel(proxy, { host: "lan.test", port: origin.port })).close();
    for (const name of ["meta.test", "meta6.test"]) {
      assertStringIncludes(
        text(await exchange(proxy, `CONNECT ${name}:443 HTTP/1.1\r\n\r\n`)),
        "reason=private_address",
      );
    }
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("a listed name that resolves to one of the box's own addresses is refused, and so is every host when they cannot be read", async () => {
  const own = await startProxy({
    hosts: ["mine.test"],
    resolve: { "mine.test": "203.0.113.7" },
  }, { ownAddresses: () => ["::ffff:203.0.113.7"] });
  const unknown = await startProxy({
    hosts: ["public.test"],
    resolve: { "public.test": "203.0.113.8" },
  }, {
    ownAddresses: () => {
      throw new Error("no interfaces");
    },
  });
  try {
    assertStringIncludes(
      text(await exchange(own, "CONNECT mine.test:443 HTTP/1.1\r\n\r\n")),
      "reason=own_address",
    );
    assertStringIncludes(
      text(await exchange(unknown, "CONNECT public.test:443 HTTP/1.1\r\n\r\n")),
      "reason=own_address",
    );
    assertEquals(own.events, [{ host: "mine.test", port: 443, reason: "own_address" }]);
  } finally {
    await own.close();
    await unknown.close();
  }
});

Deno.test("a listed name that does not resolve is refused as resolve_failed", async () => {
  const proxy = await startProxy({ hosts: ["nowhere.invalid"] }, { connectTimeoutMs: 2000 });
  try {
    assertStringIncludes(
      text(await exchange(proxy, "CONNECT nowhere.invalid:443 HTTP/1.1\r\n\r\n")),
      "reason=resolve_failed",
    );
  } finally {
    await proxy.close();
  }
});

Deno.test("a plain-HTTP request whose Host header names another host than its target is refused, and nothing is sent", async () => {
  const origin = startRawOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    for (const host of ["evil.test", "plain.test", `plain.test:${origin.port + 1}`, "127.0.0.1"]) {
      const answer = text(
        await exchange(
          proxy,
          `GET http://plain.test:${origin.port}/ HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
        ),
      );
      assertStringIncludes(answer, "reason=host_mismatch", host);
    }
    assertEquals(
      text(
        await exchange(
          proxy,
          `GET http://plain.test:${origin.port}/ HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n`,
        ),
      ).includes("reason=bad_request"),
      true,
    );
    assertEquals(proxy.events.map((event) => event.reason), [
      "host_mismatch",
      "host_mismatch",
      "host_mismatch",
      "host_mismatch",
      "bad_request",
    ]);
    assertEquals(origin.received, []);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("a CONNECT to a listed host whose TLS names another host, or none, is closed (sni_mismatch, no_sni)", async () => {
  let requests = 0;
  const origin = await startTlsServer(() => {
    requests++;
    return new Response("should not be reached");
  });
  const proxy = await startLocalProxy("good.test", origin.port);
  try {
    // other.test is on the origin's certificate: without the check the handshake would succeed.
    for (const sni of ["other.test", "127.0.0.1"]) {
      const conn = await sendConnect(
        await Deno.connect({ hostname: "127.0.0.1", port: proxy.port }),
        `good.test:${origin.port}`,
      );
      const tls = await Deno.startTls(conn, { hostname: sni, caCerts: [origin.ca] });
      let failed = false;
      await tls.handshake().catch(() => failed = true);
      assert(failed, `the handshake naming ${sni} went through`);
      tls.close();
    }
    assertEquals(proxy.events, [
      { host: "good.test", port: origin.port, reason: "sni_mismatch" },
      { host: "good.test", port: origin.port, reason: "no_sni" },
    ]);
    assertEquals(requests, 0);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("a CONNECT to port 443 that does not start with TLS is closed as not_tls before a byte reaches the origin", async (t) => {
  const hostname = `127.77.${1 + Math.floor(Math.random() * 250)}.${
    1 + Math.floor(Math.random() * 250)
  }`;
  let origin;
  try {
    origin = startRawOrigin(hostname, 443);
  } catch (error) {
    if (!(error instanceof Deno.errors.PermissionDenied)) throw error;
    await t.step("skipped: port 443 needs root here", () => {});
    return;
  }
  const proxy = await startProxy({
    hosts: ["clear.test"],
    resolve: { "clear.test": hostname },
    allowPrivate: ["clear.test"],
  });
  try {
    const conn = await openTunnel(proxy, { host: "clear.test", port: 443 });
    await writeAll(conn, "GET / HTTP/1.1\r\nHost: elsewhere.test\r\n\r\n");
    assertEquals(await readToEnd(conn), new Uint8Array());
    conn.close();
    assertEquals(proxy.events, [{ host: "clear.test", port: 443, reason: "not_tls" }]);
    assertEquals(origin.received, [""]);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

/** The tunnel's target in the tests below: plain.test, mapped to the local origin on `port`. */
function plain(port: number): { host: string; port: number } {
  return { host: "plain.test", port };
}

Deno.test("a plain-HTTP request in a CONNECT or SOCKS5 tunnel for another host is answered 403 host_mismatch inside it, and nothing reaches the origin", async () => {
  const origin = startRawOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    for (const socks of [false, true]) {
      for (const host of ["evil.test", "plain.test", `plain.test:${origin.port + 1}`]) {
        const conn = await openTunnel(proxy, plain(origin.port), { socks });
        await writeAll(conn, `GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
        const answer = text(await readToEnd(conn));
        conn.close();
        assertStringIncludes(answer, "HTTP/1.1 403 ", host);
        assertStringIncludes(answer, "reason=host_mismatch", host);
        assertStringIncludes(answer, `plain.test:${origin.port} (its URL's, or its tunnel's)`);
      }
    }
    assertEquals(
      proxy.events,
      new Array(6).fill({ host: "plain.test", port: origin.port, reason: "host_mismatch" }),
    );
    // The proxy dialled the origin before the tunnel's first bytes; it sent it none of them.
    assertEquals(origin.received.filter((bytes) => bytes !== ""), []);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("a plain-HTTP request in a tunnel is taken only in origin form: a CONNECT or an absolute URL inside one is refused as bad_request", async () => {
  const origin = startRawOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    for (
      const inner of [
        "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n",
        `GET http://evil.test/ HTTP/1.1\r\nHost: plain.test:${origin.port}\r\n\r\n`,
        `POST / HTTP/1.1\r\nHost: plain.test:${origin.port}\r\nConnection: content-length\r\nContent-Length: 3\r\n\r\nabc`,
      ]
    ) {
      const conn = await openTunnel(proxy, plain(origin.port));
      await writeAll(conn, inner);
      assertStringIncludes(text(await readToEnd(conn)), "reason=bad_request", inner);
      conn.close();
    }
    assertEquals(proxy.events.map((event) => event.reason), new Array(3).fill("bad_request"));
    assertEquals(origin.received.filter((bytes) => bytes !== ""), []);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("a tunnel that starts with neither TLS nor a request line is closed as not_tls at once, on any port", async () => {
  const origin = startRawOrigin();
  // A head timeout the test would notice: each of these is refused on its first line.
  const proxy = await startLocalProxy("plain.test", origin.port, { headTimeoutMs: 30_000 });
  try {
    const starts = [
      new TextEncoder().encode("SSH-2.0-OpenSSH_9.6\r\n"),
      new TextEncoder().encode("\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n"),
      new TextEncoder().encode("GET / HTTP/1.1\nHost: evil.test\n\n"),
      new Uint8Array([0, 0, 0, 8, 4, 210, 22, 47]),
    ];
    for (const socks of [false, true]) {
      for (const start of starts) {
        const conn = await openTunnel(proxy, plain(origin.port), { socks });
        const began = performance.now();
        await writeAll(conn, start);
        assertEquals(await readToEnd(conn), new Uint8Array());
        conn.close();
        assert(performance.now() - began < 5000, "the proxy waited for more");
      }
    }
    assertEquals(
      proxy.events,
      new Array(8).fill({ host: "plain.test", port: origin.port, reason: "not_tls" }),
    );
    assertEquals(origin.received.filter((bytes) => bytes !== ""), []);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("a plain-HTTP request in a tunnel for its own host is sent like an absolute-form one, and nothing after it", async () => {
  const origin = startRawOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    const second = "GET /b HTTP/1.1\r\nHost: evil.test\r\n\r\n";
    const requests = [
      `POST /a HTTP/1.1\r\nHost: plain.test:${origin.port}\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nhello`,
      `POST /c HTTP/1.1\r\nHost: PLAIN.test.:${origin.port}\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
      "GET /d HTTP/1.0\r\n\r\n",
    ];
    const expected = [
      `POST /a HTTP/1.1\r\nHost: plain.test:${origin.port}\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello`,
      `POST /c HTTP/1.1\r\nHost: PLAIN.test.:${origin.port}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n`,
      `GET /d HTTP/1.0\r\nHost: plain.test:${origin.port}\r\nConnection: close\r\n\r\n`,
    ];
    for (const [i, request] of requests.entries()) {
      const conn = await openTunnel(proxy, plain(origin.port), { socks: i === 1 });
      await writeAll(conn, request + second);
      await until(() => (origin.received[i] ?? "").length >= expected[i].length);
      assertEquals(origin.received[i], expected[i]);
      conn.close();
    }
    // Sent in one write with the first, the second request would be here by now if it were sent.
    assertEquals(origin.received.filter((bytes) => bytes.includes("evil.test")), []);
    assertEquals(proxy.events, []);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("requests the proxy does not take are refused as bad_request", async () => {
  const proxy = await startProxy({ hosts: ["a.test"] });
  const bad = [
    "HELLO\r\n\r\n",
    "GET https://a.test/ HTTP/1.1\r\n\r\n",
    "GET http://user@a.test/ HTTP/1.1\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
    "CONNECT a.test HTTP/1.1\r\n\r\n",
    "CONNECT a.test:443 HTTP/1.1\r\n folded: header\r\n\r\n",
    "CONNECT a%2etest:443 HTTP/1.1\r\n\r\n",
  ];
  try {
    for (const request of bad) {
      assertStringIncludes(text(await exchange(proxy, request)), "reason=bad_request", request);
    }
    assertEquals(proxy.events.length, bad.length);
  } finally {
    await proxy.close();
  }
});

Deno.test("onBlocked has the event before the client has its answer", async () => {
  const recorded: string[] = [];
  const proxy = await startProxy({}, {
    onBlocked: async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      recorded.push(`${event.host}:${event.port} ${event.reason}`);
    },
  });
  try {
    const answer = text(await exchange(proxy, "GET http://far.test/ HTTP/1.1\r\n\r\n"));
    assertStringIncludes(answer, "far.test:80 is not on this task's host list");
    assertEquals(recorded, ["far.test:80 not_listed"]);
  } finally {
    await proxy.close();
  }
});

Deno.test("limits: a head past the cap is refused, a slow head is cut off, and one connection past the cap is answered 503", async () => {
  const proxy = await startProxy({}, { headTimeoutMs: 300, maxConnections: 2 });
  try {
    const big = `GET http://a.test/ HTTP/1.1\r\nX-Big: ${"x".repeat(20_000)}\r\n\r\n`;
    assertStringIncludes(text(await exchange(proxy, big)), "reason=bad_request");
    const slow = await connectProxy(proxy);
    await writeAll(slow, "GET http://a.te");
    assertEquals(await readToEnd(slow), new Uint8Array());
    slow.close();
    const held = [await connectProxy(proxy), await connectProxy(proxy)];
    await writeAll(held[0], "G");
    await writeAll(held[1], "G");
    while (proxy.server.connections < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const third = text(await exchange(proxy, "GET http://a.test/ HTTP/1.1\r\n\r\n"));
    assertStringIncludes(third, "HTTP/1.1 503 ");
    assertStringIncludes(third, "see runbook.md#egress-busy");
    for (const conn of held) conn.close();
  } finally {
    await proxy.close();
  }
});

Deno.test("a second request sent after the first on a plain-HTTP connection never reaches the origin, whatever its Host", async () => {
  const origin = startRawOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    const first =
      `POST http://plain.test:${origin.port}/a HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello`;
    const second = "GET /b HTTP/1.1\r\nHost: evil.test\r\n\r\n";
    const chunked =
      `POST http://plain.test:${origin.port}/c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n0\r\nT: 1\r\n\r\n`;
    for (const request of [first, chunked]) {
      const conn = await connectProxy(proxy);
      await writeAll(conn, request + second);
      const expected = request.replace(/^(POST) http:\/\/[^/]+(\/\w)/, "$1 $2")
        .replace("HTTP/1.1\r\n", `HTTP/1.1\r\nHost: plain.test:${origin.port}\r\n`)
        .replace(/\r\n\r\n/, "\r\nConnection: close\r\n\r\n")
        // A chunked body reaches the origin re-framed: no extension, no trailer.
        .replace("3;x=1\r\nabc\r\n0\r\nT: 1\r\n\r\n", "3\r\nabc\r\n0\r\n\r\n");
      assertEquals(await origin.waitFor(expected.length), expected);
      conn.close();
    }
    // Sent in one write with the first, the second request would be here by now if it were sent.
    assertEquals(origin.received.every((text) => !text.includes("evil.test")), true);
    assertStringIncludes(
      text(
        await exchange(
          proxy,
          `POST http://plain.test:${origin.port}/ HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n`,
        ),
      ),
      "reason=bad_request",
    );
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("a plain-HTTP request whose Connection header names Content-Length, Transfer-Encoding or Host is refused as bad_request, and nothing is sent", async () => {
  const origin = startRawOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    const second = "GET /b HTTP/1.1\r\nHost: evil.test\r\n\r\n";
    const url = `http://plain.test:${origin.port}/a`;
    const chunk = `${second.length.toString(16)}\r\n${second}\r\n0\r\n\r\n`;
    for (
      const request of [
        `POST ${url} HTTP/1.1\r\nConnection: content-length\r\nContent-Length: ${second.length}\r\n\r\n${second}`,
        `POST ${url} HTTP/1.1\r\nConnection: Keep-Alive, Transfer-Encoding\r\nTransfer-Encoding: chunked\r\n\r\n${chunk}`,
        `GET ${url} HTTP/1.1\r\nHost: plain.test:${origin.port}\r\nConnection: HOST\r\n\r\n`,
      ]
    ) {
      assertStringIncludes(text(await exchange(proxy, request)), "reason=bad_request", request);
    }
    assertEquals(proxy.events.map((event) => event.reason), new Array(3).fill("bad_request"));
    assertEquals(origin.received, []);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

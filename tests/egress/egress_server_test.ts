/**
 * The egress proxy lets a listed host through, end to end, for each protocol it speaks: Deno's own
 * fetch over CONNECT and TLS, over absolute-form HTTP, and over SOCKS5 with host names (TLS, and
 * plain HTTP one request a tunnel), to local servers reached through the policy's resolve map. And
 * it reads its policy per connection, asks the owner in ask mode, and closes every tunnel when it
 * closes.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startTlsServer } from "../runtime/tls_fixture.ts";
import {
  clientHello,
  connectProxy,
  latin1,
  openTunnel,
  readExactly,
  readToEnd,
  sendConnect,
  startLocalProxy,
  startProxy,
  startRawOrigin,
  text,
  writeAll,
} from "./egress_kit.ts";

Deno.test("Deno fetch through CONNECT reaches a listed HTTPS host by its name, TLS end to end", async () => {
  const hosts: string[] = [];
  const origin = await startTlsServer((request) => {
    hosts.push(new URL(request.url).host);
    return new Response("hello over tls");
  });
  const proxy = await startLocalProxy("good.test", origin.port);
  const client = Deno.createHttpClient({
    proxy: { url: `http://127.0.0.1:${proxy.port}` },
    caCerts: [origin.ca],
  });
  try {
    const response = await fetch(`https://good.test:${origin.port}/hello`, { client });
    assertEquals([response.status, await response.text()], [200, "hello over tls"]);
    assertEquals(hosts, [`good.test:${origin.port}`]);
    assertEquals(proxy.events, []);
  } finally {
    client.close();
    await proxy.close();
    await origin.close();
  }
});

Deno.test("Deno fetch of an http:// URL goes as absolute form and reaches the origin in origin form with Connection: close", async () => {
  const seen: { url: string; host: string | null; connection: string | null; proxy: boolean }[] =
    [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    seen.push({
      url: new URL(request.url).pathname + new URL(request.url).search,
      host: request.headers.get("host"),
      connection: request.headers.get("connection"),
      proxy: request.headers.has("proxy-connection") || request.headers.has("proxy-authorization"),
    });
    return new Response("plain hello");
  });
  const port = server.addr.port;
  const proxy = await startLocalProxy("plain.test", port);
  const client = Deno.createHttpClient({ proxy: { url: `http://127.0.0.1:${proxy.port}` } });
  try {
    const response = await fetch(`http://plain.test:${port}/path?q=1`, { client });
    assertEquals([response.status, await response.text()], [200, "plain hello"]);
    assertEquals(seen, [{
      url: "/path?q=1",
      host: `plain.test:${port}`,
      connection: "close",
      proxy: false,
    }]);
  } finally {
    client.close();
    await proxy.close();
    await server.shutdown();
  }
});

Deno.test("an absolute-form request without a Host header is sent with the target's", async () => {
  const origin = startRawOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  const conn = await connectProxy(proxy);
  try {
    await writeAll(
      conn,
      `GET http://PLAIN.test.:${origin.port}/a HTTP/1.0\r\nProxy-Connection: keep-alive\r\nX-One: 1\r\n\r\n`,
    );
    assertEquals(
      await origin.waitFor(10),
      `GET /a HTTP/1.0\r\nHost: plain.test:${origin.port}\r\nX-One: 1\r\nConnection: close\r\n\r\n`,
    );
  } finally {
    conn.close();
    await proxy.close();
    await origin.close();
  }
});

Deno.test("Deno fetch through SOCKS5 with host names (socks5h) reaches a listed HTTPS host", async () => {
  const hosts: string[] = [];
  const origin = await startTlsServer((request) => {
    hosts.push(new URL(request.url).host);
    return new Response("hello over socks");
  });
  const proxy = await startLocalProxy("good.test", origin.port);
  const client = Deno.createHttpClient({
    proxy: { transport: "socks5", url: `socks5h://127.0.0.1:${proxy.port}` },
    caCerts: [origin.ca],
  });
  try {
    const response = await fetch(`https://good.test:${origin.port}/s`, { client });
    assertEquals([response.status, await response.text()], [200, "hello over socks"]);
    assertEquals(hosts, [`good.test:${origin.port}`]);
    assertEquals(proxy.events, []);
  } finally {
    client.close();
    await proxy.close();
    await origin.close();
  }
});

Deno.test("Deno fetch of http:// URLs through SOCKS5 (as a task's ALL_PROXY makes it) reaches the origin, one request per tunnel", async () => {
  const seen: { url: string; host: string | null; connection: string | null }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    seen.push({
      url: new URL(request.url).pathname,
      host: request.headers.get("host"),
      connection: request.headers.get("connection"),
    });
    return new Response(`plain ${new URL(request.url).pathname}`);
  });
  const port = server.addr.port;
  const proxy = await startLocalProxy("plain.test", port);
  const client = Deno.createHttpClient({
    proxy: { transport: "socks5", url: `socks5h://127.0.0.1:${proxy.port}` },
  });
  try {
    for (const path of ["/one", "/two"]) {
      const response = await fetch(`http://plain.test:${port}${path}`, { client });
      assertEquals([response.status, await response.text()], [200, `plain ${path}`]);
    }
    assertEquals(seen, [
      { url: "/one", host: `plain.test:${port}`, connection: "close" },
      { url: "/two", host: `plain.test:${port}`, connection: "close" },
    ]);
    assertEquals(proxy.events, []);
  } finally {
    client.close();
    await proxy.close();
    await server.shutdown();
  }
});

Deno.test("a name in mixed case with a trailing dot is the listed name, and its TLS may name it", async () => {
  const origin = await startTlsServer(() => new Response("same host"));
  const proxy = await startProxy({
    hosts: [`*.test:${origin.port}`],
    resolve: { "good.test": "127.0.0.1" },
    allowPrivate: ["good.test"],
  });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: proxy.port });
  try {
    await sendConnect(conn, `GOOD.Test.:${origin.port}`);
    const tls = await Deno.startTls(conn, { hostname: "good.test", caCerts: [origin.ca] });
    await writeAll(tls, "GET /m HTTP/1.1\r\nHost: good.test\r\nConnection: close\r\n\r\n");
    assertStringIncludes(text(await readToEnd(tls)), "same host");
    tls.close();
    assertEquals(proxy.events, []);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("the policy is read for each connection: a host added later is let through", async () => {
  const origin = startRawOrigin();
  const proxy = await startProxy({
    resolve: { "late.test": "127.0.0.1" },
    allowPrivate: ["late.test"],
  });
  try {
    const first = await connectProxy(proxy);
    await writeAll(first, `CONNECT late.test:${origin.port} HTTP/1.1\r\n\r\n`);
    assertStringIncludes(text(await readToEnd(first)), "403 Forbidden");
    first.close();
    proxy.policy = { ...proxy.policy, hosts: [`late.test:${origin.port}`] };
    (await openTunnel(proxy, { host: "late.test", port: origin.port })).close();
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("ask mode: the owner's yes lets this connection through, a no refuses it as not listed", async () => {
  const origin = startRawOrigin();
  const asked: string[] = [];
  let answer = true;
  const proxy = await startProxy({
    unknown: "ask",
    resolve: { "asked.test": "127.0.0.1" },
    allowPrivate: ["asked.test"],
  }, {
    ask: (host, port) => {
      asked.push(`${host}:${port}`);
      return Promise.resolve(answer);
    },
  });
  try {
    const yes = await openTunnel(proxy, { host: "asked.test", port: origin.port });
    const hello = clientHello("asked.test");
    await writeAll(yes, hello);
    assertEquals(await origin.waitFor(hello.length), latin1(hello));
    yes.close();
    answer = false;
    const no = await connectProxy(proxy);
    await writeAll(no, `CONNECT asked.test:${origin.port} HTTP/1.1\r\n\r\n`);
    assertStringIncludes(text(await readToEnd(no)), "403 Forbidden");
    no.close();
    assertEquals(asked, [`asked.test:${origin.port}`, `asked.test:${origin.port}`]);
    assertEquals(proxy.events, [{ host: "asked.test", port: origin.port, reason: "not_listed" }]);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("deny mode never asks", async () => {
  let asked = 0;
  const proxy = await startProxy({}, {
    ask: () => {
      asked++;
      return Promise.resolve(true);
    },
  });
  try {
    const conn = await connectProxy(proxy);
    await writeAll(conn, "CONNECT elsewhere.test:443 HTTP/1.1\r\n\r\n");
    assertStringIncludes(text(await readToEnd(conn)), "403 Forbidden");
    conn.close();
    assertEquals(asked, 0);
  } finally {
    await proxy.close();
  }
});

Deno.test("close() ends every open tunnel and the listener", async () => {
  const origin = startRawOrigin();
  const proxy = await startLocalProxy("open.test", origin.port);
  const conn = await openTunnel(proxy, { host: "open.test", port: origin.port });
  assertEquals(proxy.server.connections, 1);
  await proxy.server.close();
  assertEquals(await readToEnd(conn), new Uint8Array());
  conn.close();
  let refused = false;
  await Deno.connect({ transport: "unix", path: proxy.socketPath }).then(
    (again) => again.close(),
    () => refused = true,
  );
  assert(refused, "the socket still accepts after close()");
  await proxy.close();
  await origin.close();
});

Deno.test("a tunnel carries every byte both ways, in order (8 MiB of random bytes echoed)", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const echoed = (async () => {
    const conn = await listener.accept();
    const buffer = new Uint8Array(50_000);
    for (;;) {
      const read = await conn.read(buffer);
      if (read === null) break;
      await writeAll(conn, buffer.subarray(0, read));
    }
    await conn.closeWrite();
    await readToEnd(conn);
    conn.close();
  })();
  const proxy = await startLocalProxy("echo.test", listener.addr.port);
  const sent = new Uint8Array(8 * 1024 * 1024);
  for (let offset = 0; offset < sent.length; offset += 65536) {
    crypto.getRandomValues(sent.subarray(offset, offset + 65536));
  }
  // A tunnel carries TLS (or one plain request): the bytes follow a ClientHello naming the host.
  const hello = clientHello("echo.test");
  const all = new Uint8Array(hello.length + sent.length);
  all.set(hello);
  all.set(sent, hello.length);
  try {
    const conn = await openTunnel(proxy, { host: "echo.test", port: listener.addr.port });
    await writeAll(conn, hello);
    const [, received] = await Promise.all([
      (async () => {
        // Uneven writes, so reads and writes in the proxy fall at every size.
        for (
          let offset = 0, step = 1;
          offset < sent.length;
          offset += step, step = step * 7 % 300_001
        ) {
          await writeAll(conn, sent.subarray(offset, Math.min(offset + step, sent.length)));
        }
        await conn.closeWrite();
      })(),
      readToEnd(conn),
    ]);
    conn.close();
    assertEquals(received.length, all.length);
    assert(received.every((byte, i) => byte === all[i]), "the echoed bytes differ");
    await echoed;
  } finally {
    listener.close();
    await proxy.close();
  }
});

Deno.test("a listed IPv6 address is reached at that address, by CONNECT and by SOCKS5's address type", async () => {
  const origin = startRawOrigin("::1");
  const proxy = await startProxy({ hosts: [`[::1]:${origin.port}`], allowPrivate: ["[::1]"] });
  try {
    const conn = await openTunnel(proxy, { host: "[0:0::1]", port: origin.port });
    // TLS to an address names none.
    const hello = clientHello(null);
    await writeAll(conn, hello);
    assertEquals(await origin.waitFor(hello.length), latin1(hello));
    conn.close();
    const socks = await connectProxy(proxy);
    const port = [origin.port >> 8, origin.port & 0xff];
    await writeAll(
      socks,
      new Uint8Array([5, 1, 0, 5, 1, 0, 4, ...new Array(15).fill(0), 1, ...port]),
    );
    assertEquals([...await readExactly(socks, 12)], [5, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    socks.close();
    assertEquals(proxy.events, []);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

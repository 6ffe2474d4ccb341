/**
 * A tunnel to a host the box answers itself (a model service on 443) is handed, with the bytes the
 * client sent after its CONNECT or SOCKS request, to the interceptor, by CONNECT and by SOCKS5,
 * listed or not, with no name resolved and nothing dialled. Other ports of that host, and other
 * hosts, take the policy's way as before.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import {
  connectProxy,
  openTunnel,
  readExactly,
  readHead,
  startProxy,
  text,
  writeAll,
} from "./egress_kit.ts";
import type { EgressOptions } from "../../mod/egress/mod.ts";

/** An interceptor for api.model.test on 443 that answers each tunnel with what it was given. */
function echoingInterceptor(seen: string[]): Pick<EgressOptions, "intercept"> {
  return {
    intercept: (host, port) => {
      if (host !== "api.model.test" || port !== 443) return null;
      return async (client, first) => {
        // What came with the request, else the tunnel's first read.
        let got = text(first);
        if (got === "") {
          const buffer = new Uint8Array(64);
          const read = await client.read(buffer);
          got = read === null ? "" : text(buffer.subarray(0, read));
        }
        seen.push(`${host}:${port} ${got}`);
        await writeAll(client, `took ${got}`);
      };
    },
  };
}

Deno.test("a CONNECT to an intercepted host on 443 is handed to the interceptor, with no policy, DNS or dial", async () => {
  const seen: string[] = [];
  const proxy = await startProxy({}, echoingInterceptor(seen));
  try {
    const conn = await connectProxy(proxy);
    // The head and the first tunnel bytes in one write: the bytes after the head reach it too.
    await writeAll(conn, "CONNECT api.model.test:443 HTTP/1.1\r\nHost: x\r\n\r\nhello");
    assertStringIncludes(await readHead(conn), "HTTP/1.1 200 ");
    const answer = text(await readExactly(conn, "took hello".length));
    conn.close();
    assertEquals(answer, "took hello");
    assertEquals(seen, ["api.model.test:443 hello"]);
    assertEquals(proxy.events, []);
  } finally {
    await proxy.close();
  }
});

Deno.test("a SOCKS5 tunnel to an intercepted host on 443 is handed to the interceptor", async () => {
  const seen: string[] = [];
  const proxy = await startProxy({}, echoingInterceptor(seen));
  try {
    const conn = await openTunnel(proxy, { host: "API.Model.Test.", port: 443 }, { socks: true });
    await writeAll(conn, "hi");
    assertEquals(text(await readExactly(conn, "took hi".length)), "took hi");
    conn.close();
    assertEquals(seen, ["api.model.test:443 hi"]);
  } finally {
    await proxy.close();
  }
});

Deno.test("the intercepted host on another port, and any other host, take the policy's way: refused unlisted", async () => {
  const seen: string[] = [];
  const proxy = await startProxy({}, echoingInterceptor(seen));
  try {
    for (const target of ["api.model.test:8443", "other.test:443"]) {
      const conn = await connectProxy(proxy);
      await writeAll(conn, `CONNECT ${target} HTTP/1.1\r\n\r\n`);
      assertStringIncludes(await readHead(conn), "HTTP/1.1 403 ");
      conn.close();
    }
    assertEquals(seen, []);
    assertEquals(proxy.events.map((event) => `${event.host}:${event.port} ${event.reason}`), [
      "api.model.test:8443 not_listed",
      "other.test:443 not_listed",
    ]);
  } finally {
    await proxy.close();
  }
});

Deno.test("an absolute-form http:// request to an intercepted host is not intercepted: refused unlisted", async () => {
  const seen: string[] = [];
  const proxy = await startProxy({}, echoingInterceptor(seen));
  try {
    const conn = await connectProxy(proxy);
    await writeAll(conn, "GET http://api.model.test:443/v1/models HTTP/1.1\r\n\r\n");
    assertStringIncludes(await readHead(conn), "HTTP/1.1 403 ");
    conn.close();
    assertEquals(seen, []);
  } finally {
    await proxy.close();
  }
});

/**
 * SOCKS5 through the egress proxy: an address type (IPv4, IPv6) passes only for a listed address,
 * a name that spells an address is refused, and so are authentication methods and commands the
 * proxy does not take.
 */
import { assertEquals } from "../assert.ts";
import {
  connectProxy,
  exchange,
  readExactly,
  socksConnectName,
  startProxy,
  startRawOrigin,
  writeAll,
} from "./egress_kit.ts";

Deno.test("SOCKS5 with an IPv4 or IPv6 address type is refused (reply 2) unless the address is listed", async () => {
  const origin = startRawOrigin();
  const proxy = await startProxy({});
  const port = [origin.port >> 8, origin.port & 0xff];
  const v4 = new Uint8Array([5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, ...port]);
  const v6 = new Uint8Array([5, 1, 0, 5, 1, 0, 4, ...new Array(15).fill(0), 1, ...port]);
  try {
    for (const request of [v4, v6, socksConnectName("2130706433", origin.port)]) {
      const answer = await exchange(proxy, request);
      assertEquals([...answer], [5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0]);
    }
    assertEquals(proxy.events, [
      { host: "127.0.0.1", port: origin.port, reason: "ip_literal" },
      { host: "[::1]", port: origin.port, reason: "ip_literal" },
      { host: "2130706433", port: origin.port, reason: "ip_literal" },
    ]);
    proxy.policy = {
      ...proxy.policy,
      hosts: [`127.0.0.1:${origin.port}`],
      allowPrivate: ["127.0.0.1"],
    };
    const conn = await connectProxy(proxy);
    await writeAll(conn, v4);
    assertEquals([...await readExactly(conn, 12)], [5, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    conn.close();
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("SOCKS5 refuses a name in an odd spelling, a method other than none, and a command other than CONNECT", async () => {
  const proxy = await startProxy({ hosts: ["ok.test"] });
  try {
    assertEquals(
      [...await exchange(proxy, socksConnectName("１２７．０．０．１", 443))],
      [5, 0, 5, 2, 0, 1, 0, 0, 0, 0, 0, 0],
    );
    assertEquals([...await exchange(proxy, new Uint8Array([5, 1, 2]))], [5, 0xff]);
    const bind = socksConnectName("ok.test", 443);
    bind[4] = 2;
    assertEquals([...await exchange(proxy, bind)], [5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0]);
    assertEquals(proxy.events.map((event) => event.reason), [
      "ip_literal",
      "bad_request",
      "bad_request",
    ]);
  } finally {
    await proxy.close();
  }
});

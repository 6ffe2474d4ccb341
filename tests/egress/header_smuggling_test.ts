/**
 * Header smuggling through the egress proxy (issue 34): a request head whose lines hold a bare LF,
 * a bare CR, a NUL, or a folded line is read by many origins as other fields than the proxy
 * checked. Against a loopback origin that takes a bare LF as a line's end, as most servers do,
 * each such head is refused with a 400 and a net_blocked event, in absolute form, inside a CONNECT
 * or SOCKS5 tunnel, and as a CONNECT's own head; the origin reads nothing.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import {
  connectProxy,
  exchange,
  openTunnel,
  readToEnd,
  startLocalProxy,
  type TestProxy,
  text,
  writeAll,
} from "./egress_kit.ts";
import { type LaxOrigin, startLaxOrigin } from "./lax_origin.ts";

/**
 * The heads that smuggle, for a request to plain.test on `port`: `start` is the request line and
 * the fields before the smuggling one.
 */
function smuggling(start: string, port: number): Record<string, string> {
  const host = `Host: plain.test:${port}`;
  const smuggled = "GET /smuggled HTTP/1.1\r\nHost: evil.example\r\n\r\n";
  const body = `0\r\n\r\n${smuggled}`;
  return {
    "a bare LF before the real Host": `${start}X-A: a\nHost: evil.example\r\n${host}\r\n\r\n`,
    "a bare LF before Transfer-Encoding, a second request in the body":
      `${start.replace("GET", "POST")}${host}\r\nX-A: a\nTransfer-Encoding: chunked\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body}`,
    "a NUL": `${start}${host}\r\nX-A: a\0Host: evil.example\r\n\r\n`,
    "a folded line": `${start}${host}\r\nX-A: a\r\n Host: evil.example\r\n\r\n`,
    "a bare CR": `${start}X-A: a\rHost: evil.example\r\n${host}\r\n\r\n`,
  };
}

/** What became of one request: the answer's status and reason, the events, what the origin read. */
async function outcome(
  exchanged: { what: string; answer: () => Promise<string> },
  seen: { proxy: TestProxy; origin: LaxOrigin },
): Promise<string> {
  const { proxy, origin } = seen;
  const before = {
    events: proxy.events.length,
    bytes: origin.bytes,
    requests: origin.requests.length,
  };
  const answer = await exchanged.answer();
  const status = answer.split("\r\n")[0];
  const reason = /X-Gurt-Egress: blocked; reason=(\w+)/.exec(answer)?.[1] ?? "none";
  const pointer = answer.includes("see runbook.md#egress-blocked") ? "pointer" : "no pointer";
  const events = proxy.events.slice(before.events).map((event) => event.reason).join(",");
  const read = origin.bytes === before.bytes
    ? "the origin read nothing"
    : `the origin read ${origin.bytes - before.bytes} bytes: ${
      origin.requests.slice(before.requests).join("; ")
    }`;
  return `${exchanged.what}: ${status}, ${reason}, ${pointer}, recorded [${events}], ${read}`;
}

/** The outcome every smuggling head should have. */
function refused(what: string): string {
  return `${what}: HTTP/1.1 400 Bad Request, bad_request, pointer, recorded [bad_request], the origin read nothing`;
}

Deno.test("an absolute-form request whose head holds a bare LF, a NUL, a fold or a bare CR is refused with a 400 and recorded, and the origin reads nothing", async () => {
  const origin = startLaxOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    const heads = smuggling(`GET http://plain.test:${origin.port}/ HTTP/1.1\r\n`, origin.port);
    const outcomes: string[] = [];
    for (const [what, head] of Object.entries(heads)) {
      const answer = async () => text(await exchange(proxy, head));
      outcomes.push(await outcome({ what, answer }, { proxy, origin }));
    }
    assertEquals(outcomes, Object.keys(heads).map(refused));
    assertEquals([origin.connections, origin.requests], [0, []]);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("the plain request in a CONNECT or SOCKS5 tunnel whose head holds a bare LF, a NUL, a fold or a bare CR is refused with a 400 inside it and recorded, and the origin reads nothing", async () => {
  const origin = startLaxOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    const heads = smuggling("GET / HTTP/1.1\r\n", origin.port);
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const socks of [false, true]) {
      for (const [form, head] of Object.entries(heads)) {
        const what = `${form}${socks ? " (SOCKS5)" : ""}`;
        const answer = async () => {
          const conn = await openTunnel(proxy, { host: "plain.test", port: origin.port }, {
            socks,
          });
          await writeAll(conn, head);
          const answer = text(await readToEnd(conn));
          conn.close();
          return answer;
        };
        outcomes.push(await outcome({ what, answer }, { proxy, origin }));
        expected.push(refused(what));
      }
    }
    assertEquals(outcomes, expected);
    assertEquals(
      proxy.events,
      new Array(10).fill({ host: "plain.test", port: origin.port, reason: "bad_request" }),
    );
    // The proxy dials the origin before a tunnel's first bytes; it sends it none of them.
    assertEquals([origin.bytes, origin.requests], [0, []]);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("a CONNECT whose head holds a bare LF, a NUL, a fold or a bare CR is refused with a 400 and recorded, and no tunnel is opened", async () => {
  const origin = startLaxOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    const target = `plain.test:${origin.port}`;
    const heads = {
      "a bare LF": `CONNECT ${target} HTTP/1.1\r\nX-A: a\nHost: evil.example\r\n\r\n`,
      "a NUL": `CONNECT ${target} HTTP/1.1\r\nX-A: a\0b\r\n\r\n`,
      "a folded line": `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\tX-A: a\r\n\r\n`,
      "a bare CR": `CONNECT ${target} HTTP/1.1\r\nX-A: a\rb\r\n\r\n`,
      "a bare LF in the request line": `CONNECT ${target}\nX HTTP/1.1\r\n\r\n`,
    };
    const outcomes: string[] = [];
    for (const [what, head] of Object.entries(heads)) {
      const answer = async () => {
        const conn = await connectProxy(proxy);
        await writeAll(conn, `${head}GET / HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
        const answer = text(await readToEnd(conn));
        conn.close();
        return answer;
      };
      outcomes.push(await outcome({ what, answer }, { proxy, origin }));
    }
    assertEquals(outcomes, Object.keys(heads).map(refused));
    assertEquals([origin.connections, origin.bytes, origin.requests], [0, 0, []]);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

Deno.test("a head with a tab in a value and bytes past ASCII in it is still taken, as before", async () => {
  const origin = startLaxOrigin();
  const proxy = await startLocalProxy("plain.test", origin.port);
  try {
    const head = `GET http://plain.test:${origin.port}/ok HTTP/1.1\r\nX-A: a\tb\r\n` +
      `X-B: caf\u00e9\r\n\r\n`;
    const conn = await connectProxy(proxy);
    await writeAll(conn, new Uint8Array([...head].map((char) => char.charCodeAt(0))));
    assertStringIncludes(text(await readToEnd(conn)), "HTTP/1.1 200 OK");
    conn.close();
    assertEquals(origin.requests, [`GET /ok host=plain.test:${origin.port}`]);
    assertEquals(proxy.events, []);
  } finally {
    await proxy.close();
    await origin.close();
  }
});

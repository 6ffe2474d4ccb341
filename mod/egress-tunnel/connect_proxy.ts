/**
 * The guest's CONNECT proxy (docs/egress-tunnel.md#the-proxy): Chromium's only way out. It takes
 * CONNECT host:port, and absolute-form HTTP (`GET http://host/…`, which Chromium sends for plain
 * http URLs, passed on as one request with `Connection: close`), from the guest's Chromium only,
 * and carries each as a stream over the attached laptop client. Without a client: 503.
 */
import { parseTarget } from "./frames.ts";
import type { EgressHub } from "./hub.ts";

const HEAD_LIMIT = 16 * 1024;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Who may use the proxy: null admits the peer, a string is why not. */
export type PeerRefusal = (peer: Deno.NetAddr, local: Deno.NetAddr) => Promise<string | null>;

/** Serves the proxy on `listener` until it is closed. */
export async function serveProxy(
  listener: Deno.Listener<Deno.TcpConn>,
  hub: EgressHub,
  refusal: PeerRefusal,
): Promise<void> {
  for (;;) {
    let conn: Deno.TcpConn;
    try {
      conn = await listener.accept();
    } catch {
      return;
    }
    conn.setNoDelay(true);
    proxyOne(conn, hub, refusal).catch(() => {
      try {
        conn.close();
      } catch {
        // Closed already.
      }
    });
  }
}

async function proxyOne(conn: Deno.TcpConn, hub: EgressHub, refusal: PeerRefusal): Promise<void> {
  const peer = conn.remoteAddr as Deno.NetAddr;
  const why = peer.hostname.startsWith("127.") || peer.hostname === "::1"
    ? await refusal(peer, conn.localAddr as Deno.NetAddr)
    : "the proxy admits loopback connections only";
  if (why !== null) return answer(conn, 403, `${why}; see runbook.md#egress-tunnel-peer-refused`);
  const read = await readHead(conn);
  if (read === null) return answer(conn, 400, "the request head is too long or incomplete");
  const { head, rest } = read;
  const lines = head.split("\r\n");
  const [method, target, version] = lines[0].split(" ");
  let host: { host: string; port: number } | null;
  let forward: Uint8Array | undefined;
  if (method === "CONNECT") {
    host = parseTarget(target ?? "");
  } else {
    const url = URL.canParse(target ?? "") ? new URL(target) : null;
    if (url === null || url.protocol !== "http:" || !version?.startsWith("HTTP/1.")) {
      return answer(conn, 405, "the proxy takes CONNECT host:port, or GET http://… only");
    }
    host = parseTarget(`${url.hostname}:${url.port || "80"}`);
    const headers = lines.slice(1).filter((line) =>
      line !== "" && !/^(proxy-[a-z-]*|connection|keep-alive)\s*:/i.test(line)
    );
    const first = `${method} ${url.pathname}${url.search} ${version}`;
    const text = [first, ...headers, "Connection: close", "", ""].join("\r\n");
    forward = concat(encoder.encode(text), rest);
  }
  if (host === null) return answer(conn, 400, `${JSON.stringify(target)} is not host:port`);
  const opened = await hub.open(host.host, host.port);
  if (!opened.ok) return answer(conn, opened.status, opened.reason);
  if (forward === undefined) {
    await writeAll(conn, encoder.encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
    forward = rest;
  }
  opened.attach(conn, forward);
}

/** The stream's bytes the client gets first: for CONNECT, what followed the head. */
function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

async function readHead(conn: Deno.Conn): Promise<{ head: string; rest: Uint8Array } | null> {
  const buffer = new Uint8Array(HEAD_LIMIT);
  let filled = 0;
  while (filled < buffer.length) {
    const count = await conn.read(buffer.subarray(filled));
    if (count === null) return null;
    filled += count;
    for (let i = Math.max(0, filled - count - 3); i + 3 < filled; i++) {
      if (
        buffer[i] === 13 && buffer[i + 1] === 10 && buffer[i + 2] === 13 && buffer[i + 3] === 10
      ) {
        return { head: decoder.decode(buffer.subarray(0, i)), rest: buffer.slice(i + 4, filled) };
      }
    }
  }
  return null;
}

async function answer(conn: Deno.Conn, status: number, reason: string): Promise<void> {
  const body = encoder.encode(`${reason}\n`);
  const text = `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}\r\n` +
    `content-type: text/plain; charset=utf-8\r\ncontent-length: ${body.length}\r\n` +
    "connection: close\r\n\r\n";
  try {
    await writeAll(conn, concat(encoder.encode(text), body));
  } finally {
    conn.close();
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  405: "Method Not Allowed",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

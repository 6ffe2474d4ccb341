/**
 * The egress tests' kit: a proxy on a Unix socket in a temporary folder with its refusals
 * recorded, the TCP forwarder that stands in for the task's bridge (clients' proxy URLs are TCP),
 * a raw origin that records every byte it receives, and raw exchanges with the proxy.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import {
  type BlockedEvent,
  type EgressOptions,
  type EgressPolicy,
  type EgressServer,
  serveEgress,
} from "../../mod/egress/mod.ts";

/** A running proxy, its refusals in order, and a TCP port that forwards to it. */
export interface TestProxy {
  server: EgressServer;
  socketPath: string;
  events: BlockedEvent[];
  /** The TCP port on 127.0.0.1 forwarded byte for byte to the proxy's socket. */
  port: number;
  /** The policy the proxy reads at its next connection; tests may change it. */
  policy: EgressPolicy;
  close(): Promise<void>;
}

/** Starts a proxy with `policy` (deny unless given) and the other options given. */
export async function startProxy(
  policy: Partial<EgressPolicy>,
  options: Partial<EgressOptions> = {},
): Promise<TestProxy> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-egress-" });
  const socketPath = `${dir}/egress.sock`;
  const events: BlockedEvent[] = [];
  const state: { policy: EgressPolicy } = {
    policy: { hosts: [], allowPrivate: [], resolve: {}, unknown: "deny", ...policy },
  };
  const server = await serveEgress({
    socketPath,
    policy: () => state.policy,
    ownAddresses: () => [],
    onBlocked: (event) => {
      events.push(event);
      return Promise.resolve();
    },
    ...options,
  });
  const forwarder = startForwarder(socketPath);
  return {
    server,
    socketPath,
    events,
    port: forwarder.port,
    get policy() {
      return state.policy;
    },
    set policy(value: EgressPolicy) {
      state.policy = value;
    },
    async close() {
      await forwarder.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Starts a proxy whose list names `name` on `port` only, mapped to 127.0.0.1 and allowed private. */
export async function startLocalProxy(
  name: string,
  port: number,
  options: Partial<EgressOptions> = {},
): Promise<TestProxy> {
  return await startProxy({
    hosts: [`${name}:${port}`],
    resolve: { [name]: "127.0.0.1" },
    allowPrivate: [name],
  }, options);
}

/** A TCP listener on 127.0.0.1 that copies each connection both ways to the Unix socket `path`. */
export function startForwarder(path: string): { port: number; close(): Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  const loop = (async () => {
    try {
      for await (const conn of listener) {
        open.add(conn);
        void (async () => {
          let unix: Deno.Conn | null = null;
          try {
            unix = await Deno.connect({ transport: "unix", path });
            open.add(unix);
            await Promise.all([copyOneWay(conn, unix), copyOneWay(unix, conn)]);
          } catch {
            // Either side went away.
          } finally {
            for (const end of [conn, unix]) {
              if (end === null) continue;
              open.delete(end);
              closeQuietly(end);
            }
          }
        })();
      }
    } catch {
      // Closed.
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async close() {
      listener.close();
      for (const conn of open) closeQuietly(conn);
      await loop;
    },
  };
}

/** Copies `from` into `to` until `from` ends, then ends `to`'s writing side; on an error closes both. */
export async function copyOneWay(
  from: Deno.Conn,
  to: Deno.Conn,
  bufferBytes = 64 * 1024,
): Promise<void> {
  const buffer = new Uint8Array(bufferBytes);
  try {
    for (;;) {
      const read = await from.read(buffer);
      if (read === null) break;
      let offset = 0;
      while (offset < read) offset += await to.write(buffer.subarray(offset, read));
    }
    await to.closeWrite();
  } catch {
    closeQuietly(from);
    closeQuietly(to);
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

/** A TCP origin on `hostname` that records the bytes of each connection, and answers none. */
export interface RawOrigin {
  port: number;
  /** What each connection sent, as Latin-1 text, once it ended or the test looked. */
  received: string[];
  /** Resolves when a connection has sent at least `count` bytes; returns its text. */
  waitFor(count: number): Promise<string>;
  close(): Promise<void>;
}

/** Starts a RawOrigin on 127.0.0.1 (or `hostname`, on `port`). */
export function startRawOrigin(hostname = "127.0.0.1", port = 0): RawOrigin {
  const listener = Deno.listen({ hostname, port });
  const received: string[] = [];
  const open = new Set<Deno.Conn>();
  const waiters: { count: number; resolve: (text: string) => void }[] = [];
  const loop = (async () => {
    try {
      for await (const conn of listener) {
        open.add(conn);
        const index = received.push("") - 1;
        void (async () => {
          const buffer = new Uint8Array(16 * 1024);
          try {
            for (;;) {
              const read = await conn.read(buffer);
              if (read === null) break;
              received[index] += String.fromCharCode(...buffer.subarray(0, read));
              for (const waiter of [...waiters]) {
                if (received[index].length >= waiter.count) {
                  waiters.splice(waiters.indexOf(waiter), 1);
                  waiter.resolve(received[index]);
                }
              }
            }
          } catch {
            // Closed.
          }
          open.delete(conn);
          closeQuietly(conn);
        })();
      }
    } catch {
      // Closed.
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    received,
    waitFor(count: number) {
      const done = received.find((text) => text.length >= count);
      if (done !== undefined) return Promise.resolve(done);
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      listener.close();
      for (const conn of open) closeQuietly(conn);
      await loop;
    },
  };
}

/** A connection to the proxy's Unix socket. */
export function connectProxy(proxy: TestProxy): Promise<Deno.Conn> {
  return Deno.connect({ transport: "unix", path: proxy.socketPath });
}

/** Sends `CONNECT target` on `conn` and checks that the proxy answers 200; returns `conn`. */
export async function sendConnect<C extends Deno.Conn>(conn: C, target: string): Promise<C> {
  await writeAll(conn, `CONNECT ${target} HTTP/1.1\r\n\r\n`);
  assertStringIncludes(await readHead(conn), "HTTP/1.1 200 ");
  return conn;
}

/**
 * A connection to the proxy with a tunnel open to `host` on `port`: by CONNECT, or with `socks`
 * by a SOCKS5 CONNECT naming the host (checked to succeed either way).
 */
export async function openTunnel(
  proxy: TestProxy,
  target: { host: string; port: number },
  options: { socks?: boolean } = {},
): Promise<Deno.Conn> {
  const conn = await connectProxy(proxy);
  if (!options.socks) return await sendConnect(conn, `${target.host}:${target.port}`);
  await writeAll(conn, socksConnectName(target.host, target.port));
  assertEquals([...await readExactly(conn, 12)], [5, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
  return conn;
}

/** Sends `bytes` to the proxy and reads until it closes; returns what it answered. */
export async function exchange(proxy: TestProxy, bytes: string | Uint8Array): Promise<Uint8Array> {
  const conn = await connectProxy(proxy);
  try {
    await writeAll(conn, typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes);
    return await readToEnd(conn);
  } finally {
    closeQuietly(conn);
  }
}

/** Writes all of `bytes`. */
export async function writeAll(conn: Deno.Conn, bytes: Uint8Array | string): Promise<void> {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  let offset = 0;
  while (offset < data.length) offset += await conn.write(data.subarray(offset));
}

/** Reads until the other side closes (or resets). */
export async function readToEnd(conn: Deno.Conn): Promise<Uint8Array> {
  const chunks: number[] = [];
  const buffer = new Uint8Array(16 * 1024);
  try {
    for (;;) {
      const read = await conn.read(buffer);
      if (read === null) break;
      chunks.push(...buffer.subarray(0, read));
    }
  } catch {
    // Reset: what came before it is the answer.
  }
  return new Uint8Array(chunks);
}

/** Reads exactly up to the end of an HTTP head (`\r\n\r\n`), byte by byte; returns it as text. */
export async function readHead(conn: Deno.Conn): Promise<string> {
  let text = "";
  const one = new Uint8Array(1);
  while (!text.endsWith("\r\n\r\n")) {
    const read = await conn.read(one);
    if (read === null) return text;
    text += String.fromCharCode(one[0]);
  }
  return text;
}

/** Reads exactly `count` bytes, or fewer if the connection ends. */
export async function readExactly(conn: Deno.Conn, count: number): Promise<Uint8Array> {
  const out = new Uint8Array(count);
  let have = 0;
  while (have < count) {
    const read = await conn.read(out.subarray(have));
    if (read === null) break;
    have += read;
  }
  return out.subarray(0, have);
}

/** Bytes as Latin-1 text, as the raw origin records them. */
export function latin1(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes);
}

/** Text of bytes. */
export function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/** A SOCKS5 greeting offering no authentication, then a CONNECT to `host` (a name) on `port`. */
export function socksConnectName(host: string, port: number): Uint8Array {
  const name = new TextEncoder().encode(host);
  return new Uint8Array([5, 1, 0, 5, 1, 0, 3, name.length, ...name, port >> 8, port & 0xff]);
}

/**
 * A minimal TLS ClientHello record naming `name` in its SNI (none if null): enough for the proxy to
 * judge a tunnel's first bytes, though no server would finish a handshake with it.
 */
export function clientHello(name: string | null): Uint8Array {
  const sni = name === null ? [] : (() => {
    const bytes = [...new TextEncoder().encode(name)];
    const entry = [0, bytes.length >> 8, bytes.length & 0xff, ...bytes];
    const list = [entry.length >> 8, entry.length & 0xff, ...entry];
    return [0, 0, list.length >> 8, list.length & 0xff, ...list];
  })();
  const body = [
    3,
    3,
    ...new Array(32).fill(7),
    0,
    0,
    2,
    0x13,
    0x01,
    1,
    0,
    sni.length >> 8,
    sni.length & 0xff,
    ...sni,
  ];
  const handshake = [1, body.length >> 16, (body.length >> 8) & 0xff, body.length & 0xff, ...body];
  return new Uint8Array([0x16, 3, 1, handshake.length >> 8, handshake.length & 0xff, ...handshake]);
}

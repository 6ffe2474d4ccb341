/**
 * A loopback relay: a TCP port on 127.0.0.1 whose every connection is relayed byte for byte to a
 * Unix socket, for a client that can reach a proxy only by a URL (Deno's HTTP client takes an
 * HTTP proxy by `http://host:port`, never by a socket path). The core's credential dialer sends
 * its requests to its own egress proxy this way. Only processes in the box's own network namespace
 * see the port: a task's and an app's processes run in their own. At most `maxConnections` are
 * relayed at once; one more is closed at once.
 */
import { acceptConnections } from "../net/mod.ts";
import { closeQuietly, pump } from "./byte_streams.ts";

/** An open relay. */
export interface LoopbackRelay {
  /** The port on 127.0.0.1. */
  readonly port: number;
  /** Connections relayed now. */
  readonly connections: number;
  /** Stops accepting, closes every relayed connection, and waits for them. */
  close(): Promise<void>;
}

/** Opens a relay from a fresh port on 127.0.0.1 to the Unix socket at `socketPath`. */
export function openLoopbackRelay(
  socketPath: string,
  options: { maxConnections?: number; log?(line: string): void } = {},
): Promise<LoopbackRelay> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const handlers = new Set<Promise<void>>();
  const cap = options.maxConnections ?? 256;
  let closed = false;
  let relayed = 0;
  const relay = async (client: Deno.Conn) => {
    conns.add(client);
    // An answer's head and its body are written as they come: no waiting on Nagle's delayed ACK.
    (client as Deno.TcpConn).setNoDelay(true);
    const counted = relayed < cap;
    if (counted) relayed++;
    let inner: Deno.Conn | null = null;
    try {
      if (!counted || closed) return;
      inner = await Deno.connect({ transport: "unix", path: socketPath }).catch(() => null);
      if (inner === null) return;
      conns.add(inner);
      if (closed) return;
      const back = pump(inner, client);
      await pump(client, inner);
      await back;
    } finally {
      if (counted) relayed--;
      for (const conn of inner === null ? [client] : [client, inner]) {
        conns.delete(conn);
        closeQuietly(conn);
      }
    }
  };
  const accepting = acceptConnections(listener, {
    name: `the loopback relay to ${socketPath}`,
    stopped: () => closed,
    take: (conn) => {
      const handler = relay(conn);
      handlers.add(handler);
      handler.finally(() => handlers.delete(handler));
    },
    log: options.log,
  });
  const port = (listener.addr as Deno.NetAddr).port;
  return Promise.resolve({
    port,
    get connections() {
      return relayed;
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        listener.close();
      } catch {
        // Already closed.
      }
      for (const conn of conns) closeQuietly(conn);
      await accepting;
      await Promise.allSettled([...handlers]);
    },
  });
}

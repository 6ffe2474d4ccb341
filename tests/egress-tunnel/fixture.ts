/** A guest end in this process (the hub, its WebSocket listener and proxy on real sockets). */
import { EgressHub, serveProxy } from "../../mod/egress-tunnel/mod.ts";

/** The running guest end. */
export interface GuestEnd {
  hub: EgressHub;
  ws: string;
  proxy: { hostname: string; port: number };
  close(): Promise<void>;
}

/** Starts a guest end that admits every loopback peer (the peer check is tested apart). */
export function startGuestEnd(token: string): GuestEnd {
  const hub = new EgressHub(token, undefined, () => {});
  const server = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const attaching = hub.serve(server);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serving = serveProxy(listener, hub, () => Promise.resolve(null));
  return {
    hub,
    ws: `ws://127.0.0.1:${(server.addr as Deno.NetAddr).port}/`,
    proxy: { hostname: "127.0.0.1", port: (listener.addr as Deno.NetAddr).port },
    close: async () => {
      hub.close();
      listener.close();
      server.close();
      await Promise.all([serving, attaching]);
    },
  };
}

/** Sends a request through the proxy by hand and returns the whole answer as text. */
export async function viaProxy(
  proxy: { hostname: string; port: number },
  head: string,
): Promise<string> {
  const conn = await Deno.connect(proxy);
  await conn.write(new TextEncoder().encode(head));
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(65536);
  for (;;) {
    const count = await conn.read(buffer).catch(() => null);
    if (count === null) break;
    chunks.push(buffer.slice(0, count));
  }
  conn.close();
  return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
}

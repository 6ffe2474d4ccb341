/**
 * The box's own end of a tunnel it answers itself: a task's HTTPS to a model service, terminated
 * with a leaf of the box CA for that host, its requests handed to the task's model endpoint.
 *
 * Deno serves TLS only on a TCP listener, so each intercepted host has one listener on 127.0.0.1,
 * shared by every task, and a tunnel is joined to it by a loopback connection the front makes
 * itself. Before one byte of that connection is sent, its own port is recorded, by that listener,
 * with the handler of its task; a request whose connection's port is not recorded by the listener
 * it came to (another process on the host that found the listener) is refused, so a request only
 * ever reaches the endpoint of the task whose tunnel carried it. The ports are the listener's own:
 * Linux gives one local port to connections to different places, so a port that is a tunnel's on
 * one listener can be anyone's on another.
 *
 * Each listener is Deno.listenTls under mod/net's guarded accept loop, not Deno.serve, whose
 * accept loop throws "Too many open files" where nothing catches it and the core exits: out of
 * descriptors, the front stops accepting for a moment and goes on. HTTP/2 (ALPN h2) is served by
 * node:http2, HTTP/1.1 by node:http, on the same connection the handshake chose.
 */
import { type GuardedServer, serveGuardedOn } from "../net/mod.ts";
import { closeQuietly, pump, writeAll } from "./byte_streams.ts";

/** A leaf certificate and its key, PEM. */
export interface FrontLeaf {
  certPem: string;
  keyPem: string;
}

/** Answers one request that came through an intercepted tunnel. */
export type FrontHandler = (request: Request) => Promise<Response>;

/** One tunnel for the front to answer. */
export interface FrontTunnel {
  host: string;
  /** The bytes the client already sent. */
  first: Uint8Array;
  handle: FrontHandler;
  /**
   * A listener of its own for this tunnel's leaves: a task's credential hosts are answered with
   * the task's own CA (mod/box-ca's TaskCa), never with another task's, so each task has its own
   * listener per host, found by its room. Absent: the shared listener of the front's `leaf`.
   */
  room?: { id: string; leaf(host: string): Promise<FrontLeaf> };
}

/** What openTlsFront needs. */
export interface TlsFrontOptions {
  /** The leaf for a host (cached by its giver); a new one takes over from the next tunnel on. */
  leaf(host: string): Promise<FrontLeaf>;
  /** Where the front says what it cannot tell a client. */
  log?: (line: string) => void;
}

/** A running front. */
export interface TlsFront {
  /**
   * Serves one tunnel to `host`: the client's TLS (`first` being the bytes it already sent)
   * answered with the host's leaf, each request inside given to `handle`. Resolves when the
   * tunnel ends; the caller closes `client`.
   */
  take(client: Deno.Conn, tunnel: FrontTunnel): Promise<void>;
  /**
   * Closes the listeners of `room` (a task's, whose own CA's leaves they serve), once the tunnels
   * they hold end: they take no more.
   */
  dropRoom(room: string): void;
  /** Tunnels being served now. */
  readonly tunnels: number;
  /** The hosts whose listener is open, its port on 127.0.0.1, and its room if it has one. */
  listening(): { host: string; port: number; room?: string }[];
  /** Closes every listener and tunnel. */
  close(): Promise<void>;
}

/** Starts a front; its listeners open on a host's first tunnel. */
export function openTlsFront(options: TlsFrontOptions): TlsFront {
  return new Front(options);
}

/** The most connections one host's listener holds (each task has at most 256 tunnels). */
const FRONT_CONNECTIONS = 16_384;

/** One host's listener and the leaf it serves. */
interface Listening {
  server: GuardedServer;
  port: number;
  certPem: string;
  /** The front's own connections to this listener, by their local port, with their handler. */
  routes: Map<number, FrontHandler>;
}

/** The answer to a request on a connection the front did not make. */
function strangerAnswer(): Response {
  return new Response("gurt: this listener serves only the box's own tunnels.\n", {
    status: 421,
    // No Connection header: HTTP/2 (which curl asks for) forbids it.
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

class Front implements TlsFront {
  readonly #options: TlsFrontOptions;
  readonly #listeners = new Map<string, Promise<Listening>>();
  /** The listeners open now, by host. */
  readonly #ports = new Map<string, number>();
  readonly #retired = new Set<GuardedServer>();
  /** The front's own loopback connections, one per tunnel. */
  readonly #open = new Set<Deno.Conn>();
  #closed = false;

  constructor(options: TlsFrontOptions) {
    this.#options = options;
  }

  get tunnels(): number {
    return this.#open.size;
  }

  listening(): { host: string; port: number; room?: string }[] {
    return [...this.#ports].map(([key, port]) => {
      const cut = key.indexOf("\u0000");
      if (cut === -1) return { host: key, port };
      return { host: key.slice(cut + 1), port, room: key.slice(0, cut) };
    });
  }

  async take(client: Deno.Conn, tunnel: FrontTunnel): Promise<void> {
    if (this.#closed) return;
    const room = tunnel.room;
    const listening = room === undefined
      ? await this.#listening(tunnel.host, (host) => this.#options.leaf(host))
      : await this.#listening(`${room.id}\u0000${tunnel.host}`, () => room.leaf(tunnel.host));
    const inner = await Deno.connect({ hostname: "127.0.0.1", port: listening.port });
    // Small TLS records both ways (a request's head, an answer's): Nagle would hold each one for
    // the other side's delayed ACK, some 40 ms.
    inner.setNoDelay(true);
    const port = (inner.localAddr as Deno.NetAddr).port;
    listening.routes.set(port, tunnel.handle);
    this.#open.add(inner);
    try {
      if (this.#closed) return;
      if (tunnel.first.length > 0) await writeAll(inner, tunnel.first);
      // A TLS client never half-closes: when either side ends, the tunnel is over (the caller
      // closes the client; the listener sees this connection close).
      await Promise.race([pump(inner, client), pump(client, inner)]);
    } catch {
      // Either side went away.
    } finally {
      listening.routes.delete(port);
      this.#open.delete(inner);
      closeQuietly(inner);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const conn of this.#open) closeQuietly(conn);
    const servers = [...this.#retired];
    for (const made of this.#listeners.values()) {
      try {
        servers.push((await made).server);
      } catch {
        // It never listened.
      }
    }
    await Promise.allSettled(servers.map((server) => server.shutdown()));
  }

  dropRoom(room: string): void {
    const prefix = `${room}\u0000`;
    for (const [key, made] of [...this.#listeners]) {
      if (!key.startsWith(prefix)) continue;
      this.#listeners.delete(key);
      this.#ports.delete(key);
      made.then((listening) => {
        this.#retired.add(listening.server);
        listening.server.shutdown().finally(() => this.#retired.delete(listening.server));
      }, () => {});
    }
  }

  /**
   * The listener of `host` (or of a room's host: `ROOM\0HOST`) serving its leaf as it is now,
   * opened or renewed if need be.
   */
  async #listening(host: string, leafOf: (host: string) => Promise<FrontLeaf>): Promise<Listening> {
    const leaf = await leafOf(host);
    for (;;) {
      const current = this.#listeners.get(host);
      if (current === undefined) {
        const made = this.#listen(leaf);
        this.#listeners.set(host, made);
        made.then((listening) => {
          if (this.#listeners.get(host) === made) this.#ports.set(host, listening.port);
        }, () => {});
        made.catch(() => {
          if (this.#listeners.get(host) === made) this.#listeners.delete(host);
        });
        return await made;
      }
      const listening = await current.catch(() => null);
      // Another tunnel renewed it meanwhile: look again.
      if (this.#listeners.get(host) !== current) continue;
      if (listening !== null && listening.certPem === leaf.certPem) return listening;
      // A renewed leaf: the old listener finishes the tunnels it has and takes no more.
      this.#listeners.delete(host);
      if (listening !== null) {
        this.#retired.add(listening.server);
        listening.server.shutdown().finally(() => this.#retired.delete(listening.server));
      }
    }
  }

  async #listen(leaf: FrontLeaf): Promise<Listening> {
    const log = this.#options.log ?? ((line: string) => console.error(line));
    const routes = new Map<number, FrontHandler>();
    const listener = Deno.listenTls({
      hostname: "127.0.0.1",
      port: 0,
      cert: leaf.certPem,
      key: leaf.keyPem,
      alpnProtocols: ["h2", "http/1.1"],
    });
    const server = serveGuardedOn(
      listener,
      (request, conn) => route(routes, { request, remote: conn.remoteAddr as Deno.NetAddr }),
      {
        name: "the egress TLS front",
        tls: true,
        maxConnections: FRONT_CONNECTIONS,
        // A task's client keeps its connection to a model host as long as it likes.
        idleTimeoutMs: 0,
        log,
        onError: (error) => {
          log(`gurt egress: an intercepted request failed: ${describe(error)}`);
          return new Response(null, { status: 502 });
        },
      },
    );
    return await Promise.resolve({
      server,
      port: (server.addr as Deno.NetAddr).port,
      certPem: leaf.certPem,
      routes,
    });
  }
}

/** A request to a listener, given to the tunnel whose connection it came on, else refused. */
function route(
  routes: Map<number, FrontHandler>,
  arrived: { request: Request; remote: Deno.NetAddr },
): Promise<Response> | Response {
  const { request, remote } = arrived;
  const handle = remote.hostname === "127.0.0.1" ? routes.get(remote.port) : undefined;
  if (handle === undefined) return strangerAnswer();
  return handle(request);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

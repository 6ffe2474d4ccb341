/**
 * The HTTP server of every door the core opens (a task's broker socket and model endpoint, the
 * admin socket, the portal): its own accept loop, so that the core, not only a task's init,
 * holds each door to a number of open connections, and so that running out of file descriptors
 * refuses new connections instead of ending the process (Deno.serve's accept loop throws
 * "Too many open files" where nothing can catch it; node:http's own listener stops accepting for
 * good). Each accepted connection is handed to node:http, which parses it and enforces the header
 * timeout and the keep-alive idle timeout; an unreadable request, a head too large or too slow
 * gets the `{error}` answer every other refusal has.
 */
import http from "node:http";
import http2 from "node:http2";
import type { Duplex } from "node:stream";
import { acceptConnections } from "./accept_loop.ts";
import { ConnStream } from "./conn_stream.ts";
import { bridgeRequest, errorAnswer, type FetchHandler } from "./fetch_bridge.ts";
import { H1Conn, type H1Door } from "./h1_conn.ts";

export { type ConnInfo, errorAnswer, type FetchHandler } from "./fetch_bridge.ts";

/** Where a door listens: a Unix socket (its caller removes a stale one) or loopback TCP. */
export type ListenAt = { path: string } | { hostname: string; port: number };

/** How a door is held. */
export interface GuardOptions {
  /** What the door is, for log lines and refusals ("task t1's broker socket"). */
  name: string;
  /** The most connections open at once; one more is answered 503 and closed (128). */
  maxConnections?: number;
  /** How long a client may take to send a request's head, from its connection (10 s). */
  headerTimeoutMs?: number;
  /** How long a kept-alive connection may wait for its next request (5 s). */
  idleTimeoutMs?: number;
  /**
   * How long a request's body may send nothing while it is read, or its answer's client read
   * nothing while it is written (60 s): past it the connection is closed.
   */
  stallTimeoutMs?: number;
  /** Where log lines go; stderr by default. */
  log?(line: string): void;
  /** The answer when the handler throws; a 500 `{error}` by default. */
  onError?(error: unknown): Response;
  /**
   * For a TLS listener: serve HTTP/2 to a client whose handshake chose "h2" (ALPN), HTTP/1.1 to
   * any other. The listener's alpnProtocols says what is offered.
   */
  tls?: boolean;
}

/** A running door. */
export interface GuardedServer {
  /** The bound address. */
  readonly addr: Deno.Addr;
  /** Connections open now. */
  readonly connections: number;
  /** Stops accepting, closes idle connections and waits for the requests under way to end. */
  shutdown(): Promise<void>;
  /** Stops accepting and closes every connection at once. */
  close(): Promise<void>;
}

/** The defaults, also the box's when gurt.toml says nothing. */
export const GUARD_DEFAULTS = {
  maxConnections: 128,
  headerTimeoutMs: 10_000,
  idleTimeoutMs: 5_000,
  stallTimeoutMs: 60_000,
} as const;

/** Serves `handler` on `listen`, held as `options` say; throws if it cannot listen. */
export function serveGuarded(
  listen: ListenAt,
  handler: FetchHandler,
  options: GuardOptions,
): GuardedServer {
  const listener = "path" in listen
    ? Deno.listen({ transport: "unix", path: listen.path })
    : Deno.listen({ hostname: listen.hostname, port: listen.port });
  return new Door(listener, handler, options);
}

/**
 * Serves `handler` on a listener the caller opened (a TLS one, say), held as `options` say; the
 * handler is told each request's connection.
 */
export function serveGuardedOn(
  listener: Deno.Listener,
  handler: FetchHandler,
  options: GuardOptions,
): GuardedServer {
  return new Door(listener, handler, options);
}

class Door implements GuardedServer {
  readonly #listener: Deno.Listener;
  readonly #options: GuardOptions;
  /** node:http, for a TLS door's connections (HTTP/2 or HTTP/1.1 on TLS); null for the others. */
  readonly #http: http.Server | null = null;
  /** What an HTTP/1.1 connection needs of the door (every door but a TLS one). */
  readonly #h1: H1Door;
  #sweeper: ReturnType<typeof setInterval> | undefined;
  readonly #log: (line: string) => void;
  readonly #open = new Set<ConnStream | H1Conn>();
  /** Connections with a request under way. */
  readonly #busy = new Map<ConnStream, number>();
  readonly #accepting: Promise<void>;
  #stopping = false;
  #capSaid = false;
  #idleDone: (() => void) | null = null;
  #answer: (
    incoming: http.IncomingMessage,
    outgoing: http.ServerResponse,
    on?: ConnStream,
  ) => void = () => {};

  constructor(listener: Deno.Listener, handler: FetchHandler, options: GuardOptions) {
    this.#listener = listener;
    this.#options = options;
    this.#log = options.log ?? ((line) => console.error(line));
    const headerTimeoutMs = options.headerTimeoutMs ?? GUARD_DEFAULTS.headerTimeoutMs;
    const onError = options.onError ??
      ((error: unknown) => {
        this.#log(`gurt: ${options.name}: a request failed: ${describe(error)}`);
        return errorAnswer(500, "the request failed inside gurt");
      });
    // While the door closes, the answers it ends are not news.
    const onBrokenAnswer = (error: unknown) => {
      if (!this.#stopping) {
        this.#log(`gurt: ${options.name}: an answer broke off: ${describe(error)}`);
      }
    };
    const idleTimeoutMs = options.idleTimeoutMs ?? GUARD_DEFAULTS.idleTimeoutMs;
    this.#h1 = {
      name: options.name,
      headerTimeoutMs,
      idleTimeoutMs,
      stallTimeoutMs: options.stallTimeoutMs ?? GUARD_DEFAULTS.stallTimeoutMs,
      handler,
      onError,
      onBrokenAnswer,
      stopping: () => this.#stopping,
      requestEnded: (conn) => this.#requestEnded(conn),
    };
    if (options.tls === true) {
      this.#http = this.#nodeHttp(handler, headerTimeoutMs, idleTimeoutMs, onError, onBrokenAnswer);
    } else {
      // The header and idle timeouts: each connection stamps its deadline, one sweep acts on it.
      const shortest = Math.min(headerTimeoutMs, this.#h1.stallTimeoutMs);
      const every = Math.max(10, Math.min(1000, Math.floor(shortest / 4)));
      const sweeper = setInterval(() => {
        const now = performance.now();
        for (const conn of this.#open) if (conn instanceof H1Conn) conn.sweep(now);
      }, every);
      Deno.unrefTimer(sweeper);
      this.#sweeper = sweeper;
    }
    this.#accepting = acceptConnections(listener, {
      name: options.name,
      stopped: () => this.#stopping,
      take: (conn) => this.#take(conn),
      log: this.#log,
    });
  }

  /** node:http for a TLS door: HTTP/2 or HTTP/1.1 as each connection's handshake chose. */
  #nodeHttp(
    handler: FetchHandler,
    headerTimeoutMs: number,
    idleTimeoutMs: number,
    onError: (error: unknown) => Response,
    onBrokenAnswer: (error: unknown) => void,
  ): http.Server {
    const options = this.#options;
    const server = http.createServer({
      headersTimeout: headerTimeoutMs,
      // A request's body may take as long as its client needs; only its head is timed.
      requestTimeout: 0,
      keepAliveTimeout: idleTimeoutMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(headerTimeoutMs / 4))),
    });
    // A client that stops sending (a body cut short, then its half of the connection closed)
    // still reads the answer that says so.
    (server as unknown as { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    this.#answer = (incoming, outgoing, on) => {
      const conn = on ?? incoming.socket as unknown as ConnStream;
      this.#busy.set(conn, (this.#busy.get(conn) ?? 0) + 1);
      outgoing.once("close", () => this.#idle(conn));
      // The client closed its half before its body ended: the body's read fails, and the
      // handler's answer (the client's 400) still goes back on the other half. A client that
      // closes its half after a whole request is gone, as node:http reads it without half-open:
      // the connection is ended, and an answer still being written breaks off.
      const cut = () => {
        if (!incoming.complete) incoming.emit("aborted");
        else conn.end();
      };
      conn.once("end", cut);
      outgoing.once("close", () => conn.off("end", cut));
      bridgeRequest(incoming, outgoing, (request) => handler(request, conn.info), {
        onError,
        onBrokenAnswer,
      }).catch((error) => {
        this.#log(`gurt: ${options.name}: an answer could not be sent: ${describe(error)}`);
        outgoing.destroy();
      });
    };
    server.on("request", (incoming, outgoing) => this.#answer(incoming, outgoing));
    // No door opens a tunnel (and fetch has no CONNECT request to give a handler): refused.
    server.on("connect", (_incoming: http.IncomingMessage, socket: Duplex) => {
      answerRaw(socket, 405, `${options.name} opens no tunnels: CONNECT is not served here`);
    });
    server.on("clientError", (error, socket) => this.#clientError(error, socket));
    // node:http starts timing heads when its server is listening, and keeps a connection alive
    // after an answer only while it is; this one never listens itself, its door does.
    Object.defineProperty(server, "listening", { get: () => !this.#stopping });
    server.emit("listening");
    return server;
  }

  get addr(): Deno.Addr {
    return this.#listener.addr;
  }

  get connections(): number {
    return this.#open.size;
  }

  async shutdown(): Promise<void> {
    this.#stop();
    for (const conn of this.#open) if (!this.#isBusy(conn)) conn.destroy();
    if (this.#busyCount() > 0) {
      const { promise, resolve } = Promise.withResolvers<void>();
      this.#idleDone = resolve;
      await promise;
    }
    for (const conn of this.#open) conn.destroy();
    await this.#accepting;
  }

  async close(): Promise<void> {
    this.#stop();
    for (const conn of this.#open) conn.destroy();
    await this.#accepting;
  }

  #stop(): void {
    if (this.#stopping) return;
    this.#stopping = true;
    try {
      this.#listener.close();
    } catch {
      // Already closed.
    }
    this.#http?.close();
    clearInterval(this.#sweeper);
  }

  #isBusy(conn: ConnStream | H1Conn): boolean {
    return conn instanceof H1Conn ? conn.busy : this.#busy.has(conn);
  }

  #busyCount(): number {
    let count = this.#busy.size;
    for (const conn of this.#open) if (conn instanceof H1Conn && conn.busy) count++;
    return count;
  }

  /** A request on an HTTP/1.1 connection ended; during shutdown an idle connection is closed. */
  #requestEnded(conn: H1Conn): void {
    if (!this.#stopping) return;
    conn.destroy();
    if (this.#busyCount() === 0) this.#idleDone?.();
  }

  /** A request on `conn` ended; during shutdown an idle connection is closed. */
  #idle(conn: ConnStream): void {
    const left = (this.#busy.get(conn) ?? 1) - 1;
    if (left > 0) {
      this.#busy.set(conn, left);
      return;
    }
    this.#busy.delete(conn);
    if (!this.#stopping) return;
    conn.destroy();
    if (this.#busyCount() === 0) this.#idleDone?.();
  }

  #take(conn: Deno.Conn): void {
    const most = this.#options.maxConnections ?? GUARD_DEFAULTS.maxConnections;
    if (this.#open.size >= most) {
      if (!this.#capSaid) {
        this.#capSaid = true;
        this.#log(`gurt: ${this.#busyText(most)} (said once for this door)`);
      }
      refuse(conn, this.#busyText(most));
      return;
    }
    if (this.#http === null) {
      const served = new H1Conn(conn, this.#h1);
      this.#open.add(served);
      served.done.then(() => {
        this.#open.delete(served);
        if (this.#stopping && this.#busyCount() === 0) this.#idleDone?.();
      });
      return;
    }
    const stream = new ConnStream(conn);
    this.#open.add(stream);
    stream.once("close", () => {
      this.#open.delete(stream);
      if (this.#busy.delete(stream) && this.#busyCount() === 0) this.#idleDone?.();
    });
    stream.on("error", () => {});
    this.#takeTls(conn as Deno.TlsConn, stream, this.#http);
  }

  /**
   * A TLS connection: its handshake (within the header timeout) says HTTP/2 or HTTP/1.1. Each
   * HTTP/2 connection has a server of its own, so its requests know their connection.
   */
  #takeTls(conn: Deno.TlsConn, stream: ConnStream, server: http.Server): void {
    const ms = this.#options.headerTimeoutMs ?? GUARD_DEFAULTS.headerTimeoutMs;
    const timer = setTimeout(() => stream.destroy(), ms);
    conn.handshake().then((shaken) => {
      clearTimeout(timer);
      if (stream.destroyed) return;
      if (shaken.alpnProtocol !== "h2") {
        server.emit("connection", stream);
        return;
      }
      const h2 = http2.createServer();
      h2.on("request", (incoming, outgoing) => {
        this.#answer(
          incoming as unknown as http.IncomingMessage,
          outgoing as unknown as http.ServerResponse,
          stream,
        );
      });
      h2.on("sessionError", () => stream.destroy());
      stream.once("close", () => h2.close());
      h2.emit("connection", stream);
    }, () => {
      clearTimeout(timer);
      stream.destroy();
    });
  }

  #busyText(most: number): string {
    return `${this.#options.name} already has ${most} connections open, the most it may; ` +
      "close some and try again. see runbook.md#door-busy";
  }

  /** A request node:http could not read, or whose head came too slowly or too large. */
  #clientError(error: Error & { code?: string }, socket: Duplex): void {
    const code = error.code ?? "";
    let status = 400;
    let text = `the request is not HTTP/1.1 gurt can read (${error.message})`;
    if (code === "HPE_HEADER_OVERFLOW") {
      status = 431;
      text = "the request's head is larger than 16 KiB, the most a gurt door reads";
    } else if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
      status = 408;
      const ms = this.#options.headerTimeoutMs ?? GUARD_DEFAULTS.headerTimeoutMs;
      text = `the request's head did not arrive within ${ms} ms; see runbook.md#door-timeout`;
    } else if (!code.startsWith("HPE_")) {
      socket.destroy();
      return;
    }
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    answerRaw(socket, status, text);
  }
}

/** Writes a `{error}` answer on a connection node:http gave up, and ends it. */
function answerRaw(socket: Duplex, status: number, text: string): void {
  const body = JSON.stringify({ error: text });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\ncontent-type: application/json\r\n` +
      `content-length: ${
        new TextEncoder().encode(body).length
      }\r\nconnection: close\r\n\r\n${body}`,
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  405: "Method Not Allowed",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
};

/** Answers a connection past the door's cap with a 503 `{error}` and closes it. */
function refuse(conn: Deno.Conn, text: string): void {
  const body = JSON.stringify({ error: text });
  const answer = new TextEncoder().encode(
    `HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n` +
      `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
  );
  // A client that does not read never holds the refusal open: one write, then close.
  conn.write(answer).catch(() => {}).finally(() => {
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

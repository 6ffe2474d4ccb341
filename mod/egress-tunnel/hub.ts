/**
 * The guest's end of the tunnel (docs/egress-tunnel.md): the WebSocket listener the laptop's
 * client attaches to, at most one client at a time, and the streams the CONNECT proxy opens
 * through it.
 */
import { timingSafeEqual } from "node:crypto";
import {
  checkHello,
  DEFAULT_LIMITS,
  type Limits,
  openFrame,
  PROTOCOL,
  ResetCode,
} from "./frames.ts";
import { Mux } from "./mux.ts";
import { acceptOf, readHead, WsConn } from "./ws_conn.ts";

const encoder = new TextEncoder();

const HELLO_TIMEOUT_MS = 5_000;

/** What an open asked of the tunnel came to. */
export type OpenResult =
  | { ok: true; attach: (conn: Deno.Conn, head?: Uint8Array) => void }
  | { ok: false; status: number; reason: string };

/** The attached client, if any, and the streams through it. */
export class EgressHub {
  #current: Mux | null = null;
  #pending = new Map<number, (answer: OpenResult) => void>();

  constructor(
    private readonly token: string,
    readonly limits: Limits = DEFAULT_LIMITS,
    private readonly log: (line: string) => void = (line) => console.error(line),
  ) {}

  /** Whether a client is attached now. */
  get attached(): boolean {
    return this.#current !== null && !this.#current.closed;
  }

  /** The attached client's mux, for tests and the bench. */
  get mux(): Mux | null {
    return this.#current;
  }

  /** Serves the WebSocket listener until it is closed. */
  async serve(listener: Deno.Listener<Deno.TcpConn>): Promise<void> {
    for (;;) {
      let conn: Deno.TcpConn;
      try {
        conn = await listener.accept();
      } catch {
        return;
      }
      conn.setNoDelay(true);
      this.#upgrade(conn).catch(() => {
        try {
          conn.close();
        } catch {
          // closed
        }
      });
    }
  }

  async #upgrade(conn: Deno.TcpConn): Promise<void> {
    const head = await readHead(conn);
    if (head === null) return conn.close();
    const auth = head.headers.get("authorization") ?? "";
    if (!bearerMatches(auth, this.token)) {
      return refuse(
        conn,
        "401 Unauthorized",
        "the egress tunnel needs Authorization: Bearer <BOX_EGRESS_TOKEN, else the host token>; " +
          "see runbook.md#egress-tunnel-cannot-attach",
      );
    }
    const key = head.headers.get("sec-websocket-key");
    if (
      !head.lines[0].startsWith("GET ") ||
      head.headers.get("upgrade")?.toLowerCase() !== "websocket" || key === null
    ) {
      return refuse(
        conn,
        "426 Upgrade Required",
        `the egress tunnel speaks ${PROTOCOL} over a WebSocket only`,
      );
    }
    await conn.write(encoder.encode(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        `Sec-WebSocket-Accept: ${acceptOf(key)}\r\n\r\n`,
    ));
    const socket = new WsConn(conn, false, this.limits.maxFrame + 1024, head.rest);
    let mux: Mux | null = null;
    const timer = setTimeout(() => {
      if (mux === null) socket.close(1002, "no hello within 5 seconds");
    }, HELLO_TIMEOUT_MS);
    socket.onmessage = (data) => {
      if (mux !== null) {
        if (typeof data === "string") mux.close(1002, "bad frame: a text message after the hello");
        else mux.receive(data);
        return;
      }
      clearTimeout(timer);
      const hello = typeof data === "string"
        ? checkHello(data)
        : { ok: false as const, reason: "the first message is not the text hello" };
      if (!hello.ok) {
        socket.send(JSON.stringify({ type: "error", reason: hello.reason }));
        socket.close(1002, hello.reason);
        return;
      }
      mux = this.#attach(socket);
    };
    socket.onclose = () => {
      clearTimeout(timer);
      mux?.close(1000, "the client left");
    };
  }

  /** Opens host:port through the attached client; resolves when the client answers. */
  open(host: string, port: number): Promise<OpenResult> {
    const mux = this.#current;
    if (mux === null || mux.closed) {
      return Promise.resolve({
        ok: false,
        status: 503,
        reason:
          "the laptop egress tunnel is not attached: run gurt egress-tunnel on your machine; " +
          "see runbook.md#egress-tunnel-not-attached",
      });
    }
    if (mux.size >= this.limits.maxStreams) {
      return Promise.resolve({
        ok: false,
        status: 503,
        reason: `the egress tunnel has ${this.limits.maxStreams} streams open, its limit; ` +
          "see runbook.md#egress-tunnel-not-attached",
      });
    }
    return new Promise((resolve) => {
      const id = mux.open((id) => openFrame(id, host, port));
      this.#pending.set(id, resolve);
    });
  }

  /** Detaches the client, if any. */
  close(): void {
    this.#current?.close(1001, "the guest is stopping");
  }

  #attach(socket: WsConn): Mux {
    const replaced = this.#current !== null && !this.#current.closed;
    if (replaced) {
      this.log(
        "gurt guest: a new egress-tunnel client with the same token replaced the attached one",
      );
      this.#current!.close(4000, "replaced by a newer client with the same token");
    }
    const mux: Mux = new Mux(socket, this.limits, {
      onOpenAnswer: (id, answer) => {
        const resolve = this.#pending.get(id);
        this.#pending.delete(id);
        if (!resolve) return;
        if (answer.ok) resolve({ ok: true, attach: (conn, head) => mux.attach(id, conn, head) });
        else resolve({ ok: false, status: statusOf(answer.code), reason: answer.reason });
      },
      onStreamEnd: (end) => {
        const resolve = this.#pending.get(end.id);
        this.#pending.delete(end.id);
        resolve?.({ ok: false, status: 502, reason: end.reset?.reason ?? "the stream ended" });
      },
      onClose: (reason) => {
        if (this.#current === mux) {
          this.#current = null;
          this.log(`gurt guest: the egress-tunnel client detached (${reason})`);
        }
      },
    }, true);
    this.#current = mux;
    socket.send(
      JSON.stringify({ type: "welcome", protocol: PROTOCOL, limits: this.limits, replaced }),
    );
    this.log(
      `gurt guest: an egress-tunnel client attached${replaced ? " (replacing the last)" : ""}`,
    );
    return mux;
  }
}

function statusOf(code: number): number {
  if (code === ResetCode.REFUSED) return 403;
  if (code === ResetCode.LIMIT) return 503;
  return 502;
}

function bearerMatches(header: string, token: string): boolean {
  const match = /^Bearer (.+)$/.exec(header);
  if (match === null) return false;
  const given = new TextEncoder().encode(match[1]);
  const want = new TextEncoder().encode(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

async function refuse(conn: Deno.Conn, status: string, reason: string): Promise<void> {
  const body = encoder.encode(`${reason}\n`);
  const head = `HTTP/1.1 ${status}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
    `content-length: ${body.length}\r\nwww-authenticate: Bearer\r\nconnection: close\r\n\r\n`;
  try {
    await conn.write(encoder.encode(head));
    await conn.write(body);
  } finally {
    conn.close();
  }
}

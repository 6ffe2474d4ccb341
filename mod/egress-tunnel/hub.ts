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

  /** Answers one request to the WebSocket listener. */
  handle(request: Request): Response {
    const auth = request.headers.get("authorization") ?? "";
    if (!bearerMatches(auth, this.token)) {
      return new Response(
        "the egress tunnel needs Authorization: Bearer <BOX_EGRESS_TOKEN, else the host token>; " +
          "see runbook.md#egress-tunnel-not-attached\n",
        { status: 401, headers: { "www-authenticate": "Bearer" } },
      );
    }
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return new Response(`the egress tunnel speaks ${PROTOCOL} over a WebSocket only\n`, {
        status: 426,
        headers: { upgrade: "websocket" },
      });
    }
    const { socket, response } = Deno.upgradeWebSocket(request, { idleTimeout: 0 });
    socket.binaryType = "arraybuffer";
    let mux: Mux | null = null;
    const timer = setTimeout(() => {
      if (mux === null) socket.close(1002, "no hello within 5 seconds");
    }, HELLO_TIMEOUT_MS);
    socket.onmessage = (event) => {
      if (mux !== null) {
        if (typeof event.data === "string") {
          mux.close(1002, "bad frame: a text message after the hello");
        } else mux.receive(new Uint8Array(event.data as ArrayBuffer));
        return;
      }
      clearTimeout(timer);
      const hello = typeof event.data === "string"
        ? checkHello(event.data)
        : { ok: false as const, reason: "the first message is not the text hello" };
      if (!hello.ok) {
        socket.send(JSON.stringify({ type: "error", reason: hello.reason }));
        socket.close(1002, hello.reason.slice(0, 120));
        return;
      }
      mux = this.#attach(socket);
    };
    socket.onclose = () => {
      clearTimeout(timer);
      mux?.close(1000, "the client left");
    };
    socket.onerror = () => {};
    return response;
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

  #attach(socket: WebSocket): Mux {
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

/**
 * One HTTP/1.1 connection of a guarded door, served straight on the Deno connection the door
 * accepted (node:http's parser fed through a Node stream cost three to four times Deno.serve's
 * time per request). Requests are read one after another (kept alive, pipelined ones in turn), each
 * handed to the door's fetch handler as a Request whose body is read from the wire only as the
 * handler reads it, and each answer written back as it comes, a chunk at a time with the
 * connection's backpressure. The door's sweep enforces the header timeout (408) and the idle
 * timeout by the deadline each connection stamps; an unreadable head gets the `{error}` answer
 * every other refusal has.
 */
import {
  HeadError,
  headText,
  parseHead,
  reasonOf,
  type RequestHead,
  requestUrl,
} from "./h1_head.ts";
import { type Answered, writeAnswer } from "./h1_answer.ts";
import { BodyFramingError, BodyReader } from "./h1_body.ts";
import { ConnReader } from "./h1_reader.ts";

/** The most a head may be, as node:http reads (16 KiB): past it, 431. */
const MAX_HEAD = 16 * 1024;
/** A body of at most this many bytes that is already read is given as bytes, not a stream. */
const SMALL_BODY = 64 * 1024;
/** The most of an unread body read and dropped to keep the connection (a task's 20 MiB). */
const DRAIN_BYTES = 24 * 1024 * 1024;
/** After the door ends a connection, what the client still sends is dropped this long at most. */
const DRAIN_MS = 5_000;
/** A connection's buffer for a small answer (a head and a JSON body). */
const SCRATCH_SIZE = 8 * 1024;
const CONTINUE = new TextEncoder().encode("HTTP/1.1 100 Continue\r\n\r\n");

/** What a connection needs of its door. */
export interface H1Door {
  name: string;
  headerTimeoutMs: number;
  idleTimeoutMs: number;
  /** How long a body's read or an answer's write may wait on the client. */
  stallTimeoutMs: number;
  handler(request: Request, conn: { remoteAddr: Deno.Addr }): Response | Promise<Response>;
  onError(error: unknown): Response;
  onBrokenAnswer(error: unknown): void;
  /** True once the door is closing: no connection is kept after its answer. */
  stopping(): boolean;
  /** A request on the connection ended (its answer sent or given up). */
  requestEnded(conn: H1Conn): void;
}

/** One accepted connection, served until it closes. */
export class H1Conn {
  readonly #conn: Deno.Conn;
  readonly #door: H1Door;
  readonly #reader: ConnReader;
  /** When the door's sweep acts (performance.now()); 0: nothing timed. */
  #deadline = 0;
  /** What the deadline ends: a head that is late (408), or an idle kept-alive connection. */
  #timing: "head" | "idle" = "head";
  #busy = false;
  /** Reads and writes waiting on the client now, and when the sweep closes them (0: none). */
  #waits = 0;
  #stallDeadline = 0;
  readonly #stall = {
    begin: () => {
      if (this.#waits++ === 0) this.#stallDeadline = performance.now() + this.#door.stallTimeoutMs;
    },
    end: () => {
      // Each wait that ends is progress: the others are timed from now.
      this.#stallDeadline = --this.#waits === 0 ? 0 : performance.now() + this.#door.stallTimeoutMs;
    },
  };
  #closed = false;
  #scratch: Uint8Array | null = null;
  /** Refused or ending: nothing more is read as a request; resolves when the end is done. */
  #ending: Promise<void> | null = null;
  /** Resolves when the connection is closed. */
  readonly done: Promise<void>;

  constructor(conn: Deno.Conn, door: H1Door) {
    this.#conn = conn;
    this.#door = door;
    this.#reader = new ConnReader(conn);
    this.#reader.stall = this.#stall;
    if (conn.remoteAddr.transport === "tcp") {
      try {
        (conn as Deno.TcpConn).setNoDelay(true);
      } catch {
        // Closed already.
      }
    }
    this.#deadline = performance.now() + door.headerTimeoutMs;
    this.done = this.#serve().catch(() => {}).finally(() => this.destroy());
  }

  /** Whether a request is under way (its head read, its answer not yet sent). */
  get busy(): boolean {
    return this.#busy;
  }

  /** The connection's addresses, for the door's handler. */
  get info(): { remoteAddr: Deno.Addr } {
    return { remoteAddr: this.#conn.remoteAddr };
  }

  /** Closes the connection at once. */
  destroy(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
  }

  /** The door's sweep: a head past its time is answered 408, an idle connection closed. */
  sweep(now: number): void {
    if (this.#stallDeadline !== 0 && now >= this.#stallDeadline && !this.#closed) {
      // A body that sends nothing, or a client that reads nothing of its answer: the read or
      // write fails, the handler's signal aborts.
      this.#door.onBrokenAnswer(
        new Error(
          `the client sent or read nothing for ${this.#door.stallTimeoutMs} ms while its request was under way; see runbook.md#door-timeout`,
        ),
      );
      this.destroy();
      return;
    }
    if (this.#deadline === 0 || now < this.#deadline || this.#closed) return;
    this.#deadline = 0;
    if (this.#timing === "idle" && this.#reader.buffered === 0) {
      this.destroy();
      return;
    }
    const ms = this.#door.headerTimeoutMs;
    this.#refuse(
      408,
      `the request's head did not arrive within ${ms} ms; see runbook.md#door-timeout`,
    );
  }

  async #serve(): Promise<void> {
    while (!this.#closed) {
      const head = await this.#readHead();
      if (head === null) return;
      this.#busy = true;
      let keep = false;
      try {
        keep = await this.#exchange(head);
      } finally {
        this.#busy = false;
        this.#door.requestEnded(this);
      }
      if (!keep || this.#door.stopping()) {
        await this.#end();
        return;
      }
      this.#timing = "idle";
      this.#deadline = performance.now() + this.#door.idleTimeoutMs;
    }
  }

  /** The next request's head, or null when the connection ended (or was refused) before one. */
  async #readHead(): Promise<RequestHead | null> {
    const reader = this.#reader;
    let end = reader.find(MAX_HEAD);
    while (end < 0) {
      if (reader.buffered >= MAX_HEAD) {
        await this.#refuse(
          431,
          "the request's head is larger than 16 KiB, the most a gurt door reads",
        );
        return null;
      }
      const count = await reader.fill().catch(() => null);
      if (this.#ending !== null) await this.#ending;
      if (count === null || this.#closed || this.#ending !== null) return null;
      if (this.#timing === "idle") {
        // The first byte of the next request: from now its head is timed.
        this.#timing = "head";
        this.#deadline = performance.now() + this.#door.headerTimeoutMs;
      }
      end = reader.find(MAX_HEAD);
    }
    this.#deadline = 0;
    let head: RequestHead;
    try {
      head = parseHead(headText(reader.view(end)));
      reader.skip(4);
    } catch (error) {
      const status = error instanceof HeadError ? error.status : 400;
      await this.#refuse(status, `the request is not HTTP/1.1 gurt can read (${describe(error)})`);
      return null;
    }
    if (head.method === "CONNECT") {
      await this.#refuse(405, `${this.#door.name} opens no tunnels: CONNECT is not served here`);
      return null;
    }
    return head;
  }

  /** One request and its answer; true when the connection may carry another. */
  async #exchange(head: RequestHead): Promise<boolean> {
    const gone = new AbortController();
    const body = new BodyReader(this.#reader, head.length);
    // 100 Continue goes when the handler first reads the body, not before: a request answered
    // without its body is not asked for it (and the connection ends after that answer).
    let waiting = head.expectsContinue && head.length !== 0;
    const sendContinue = async () => {
      if (!waiting) return;
      waiting = false;
      await this.#write(CONTINUE);
    };
    let request: Request;
    try {
      request = this.#request(head, body, gone.signal, sendContinue);
      // A body that came whole with its head is the handler's already.
      if (body.done) await sendContinue();
    } catch (error) {
      const refusal = Response.json({
        error: `the request could not be read as HTTP: ${describe(error)}`,
      }, { status: 400 });
      await this.#answer(refusal, head, gone);
      return false;
    }
    let answered = false;
    // Once the body is read, a client that ends its side (or drops) before its answer is sent
    // is gone: the handler's signal aborts, and an answer under way breaks off. The read that
    // tells it is the next request's first, if one comes instead.
    body.ended.then((whole) => {
      if (!whole || answered || this.#closed) return;
      const lost = () => {
        if (!answered) gone.abort(new Error("the client closed its connection"));
      };
      this.#reader.fill().then((count) => count === null && lost(), lost);
    });
    let response: Response;
    try {
      response = await this.#door.handler(request, this.info);
    } catch (error) {
      // A body framed wrongly is the client's fault: 400, as a head that is.
      response = error instanceof BodyFramingError
        ? Response.json({ error: `the request is not HTTP/1.1 gurt can read (${error.message})` }, {
          status: 400,
        })
        : this.#door.onError(error);
    }
    const answer = await this.#answer(response, head, gone);
    answered = true;
    if (!answer.sent || answer.close || gone.signal.aborted || body.failed || waiting) return false;
    // What the handler left of the body is read and dropped, up to the drain's limit.
    if (!body.done && !(await body.drain(DRAIN_BYTES))) return false;
    return head.keepAlive;
  }

  #request(
    head: RequestHead,
    body: BodyReader,
    signal: AbortSignal,
    beforeRead: () => Promise<void>,
  ): Request {
    const url = requestUrl(head.target, head.host);
    const { method, headers } = head;
    if (head.length === 0 || method === "GET" || method === "HEAD") {
      // A GET's body is read off the wire after the answer (it frames the next request).
      return new Request(url, { method, headers, signal });
    }
    if (head.length > 0 && head.length <= SMALL_BODY && this.#reader.buffered >= head.length) {
      return new Request(url, { method, headers, body: body.takeWhole(), signal });
    }
    return new Request(url, {
      method,
      headers,
      body: body.stream(beforeRead),
      signal,
      duplex: "half",
    } as RequestInit);
  }

  #answer(response: Response, head: RequestHead, gone: AbortController): Promise<Answered> {
    return writeAnswer(this.#conn, response, {
      head: head.method === "HEAD",
      http10: head.minor === 0,
      close: !head.keepAlive || this.#door.stopping(),
      gone,
      onBrokenAnswer: (error) => this.#door.onBrokenAnswer(error),
      scratch: this.#scratch ??= new Uint8Array(SCRATCH_SIZE),
      stall: this.#stall,
    });
  }

  async #write(bytes: Uint8Array): Promise<void> {
    for (let at = 0; at < bytes.length;) {
      this.#stall.begin();
      try {
        at += await this.#conn.write(at === 0 ? bytes : bytes.subarray(at));
      } finally {
        this.#stall.end();
      }
    }
  }

  /** An `{error}` answer on a connection that cannot go on, then its end. */
  #refuse(status: number, text: string): Promise<void> {
    const body = JSON.stringify({ error: text });
    const bytes = new TextEncoder().encode(
      `HTTP/1.1 ${status} ${reasonOf(status)}\r\ncontent-type: application/json\r\n` +
        `content-length: ${new TextEncoder().encode(body).length}\r\nconnection: close\r\n\r\n` +
        body,
    );
    if (this.#ending !== null) return this.#ending;
    const ending = this.#write(bytes).then(() => this.#drainAndClose(), () => this.destroy());
    this.#ending = ending;
    return ending;
  }

  /**
   * Ends the connection: its write side first, then what the client still sends is read and
   * dropped (so that a client writing a body the door refused reads its answer), at most
   * DRAIN_BYTES for DRAIN_MS.
   */
  #end(): Promise<void> {
    return this.#ending ??= this.#drainAndClose();
  }

  async #drainAndClose(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#conn.closeWrite();
    } catch {
      this.destroy();
      return;
    }
    const timer = setTimeout(() => this.destroy(), DRAIN_MS);
    try {
      let dropped = 0;
      while (!this.#closed && dropped <= DRAIN_BYTES) {
        this.#reader.discard();
        const count = await this.#reader.fill();
        if (count === null) break;
        dropped += count;
      }
    } catch {
      // Reset or closed: nothing more to drop.
    } finally {
      clearTimeout(timer);
      this.destroy();
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

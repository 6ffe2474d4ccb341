/**
 * A Deno connection as a Node stream, so that node:http can serve a connection the guarded server
 * accepted itself (Deno.serve and node:http's own listener accept for themselves, and neither
 * survives running out of descriptors; see guarded_server.ts). It reads only while node:http
 * wants more, writes with backpressure, and keeps Node's socket idle timer (node:http ends a
 * kept-alive connection by it).
 */
import { Duplex } from "node:stream";
import { Buffer } from "node:buffer";

const READ_SIZE = 16 * 1024;
/**
 * After node:http ends a connection, what the client still sends is read and dropped, so that a
 * client writing a body the door refused reads its answer; at most this much, this long.
 */
const DRAIN_BYTES = 24 * 1024 * 1024;
const DRAIN_MS = 5_000;

/** One accepted connection, as the socket node:http expects. */
export class ConnStream extends Duplex {
  readonly #conn: Deno.Conn;
  #reading = false;
  #idleMs = 0;
  #idle: ReturnType<typeof setTimeout> | null = null;
  /** Bytes dropped since node:http ended the connection; -1 before. */
  #dropped = -1;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;

  /** Wraps `conn`; closing the stream closes the connection. */
  constructor(conn: Deno.Conn) {
    super({ allowHalfOpen: true });
    this.#conn = conn;
  }

  /** The connection's addresses, for the door's handler. */
  get info(): { remoteAddr: Deno.Addr } {
    return { remoteAddr: this.#conn.remoteAddr };
  }

  /** node:http reads it; a Unix socket has none. */
  get remoteAddress(): string | undefined {
    const addr = this.#conn.remoteAddr;
    return addr.transport === "tcp" ? addr.hostname : undefined;
  }

  /** node:http asks; these connections carry no TLS. */
  readonly encrypted = false;

  override _read(): void {
    if (this.#reading) return;
    this.#reading = true;
    this.#pull().catch((error) => this.destroy(error));
  }

  async #pull(): Promise<void> {
    while (!this.destroyed) {
      const buffer = new Uint8Array(READ_SIZE);
      const count = await this.#conn.read(buffer);
      this.#active();
      if (count === null) {
        if (this.#dropped >= 0) this.destroy();
        else this.push(null);
        return;
      }
      if (this.#dropped >= 0) {
        this.#dropped += count;
        if (this.#dropped > DRAIN_BYTES) this.destroy();
        continue;
      }
      if (!this.push(Buffer.from(buffer.buffer, 0, count))) break;
    }
    this.#reading = false;
  }

  override _write(
    chunk: Uint8Array,
    _encoding: string,
    done: (error?: Error | null) => void,
  ): void {
    this.#writeAll(chunk).then(() => done(), (error) => done(error));
  }

  /** node:http writes a head, a body and a chunk's end at once: sent as one write. */
  override _writev(
    chunks: { chunk: Uint8Array }[],
    done: (error?: Error | null) => void,
  ): void {
    this.#writeAll(Buffer.concat(chunks.map((part) => part.chunk))).then(
      () => done(),
      (error) => done(error),
    );
  }

  async #writeAll(chunk: Uint8Array): Promise<void> {
    let at = 0;
    while (at < chunk.length) {
      at += await this.#conn.write(chunk.subarray(at));
      this.#active();
    }
  }

  override _final(done: (error?: Error | null) => void): void {
    this.#conn.closeWrite().then(() => done(), () => done());
    this.#dropped = 0;
    this.#drainTimer = setTimeout(() => this.destroy(), DRAIN_MS);
    this._read();
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    this.#clearIdle();
    clearTimeout(this.#drainTimer);
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
    done(error);
  }

  /** Node's socket idle timer: `timeout` after `ms` with nothing read or written (0: none). */
  setTimeout(ms: number, listener?: () => void): this {
    this.#idleMs = ms;
    if (listener !== undefined) this.once("timeout", listener);
    this.#active();
    return this;
  }

  /** Nothing to do on these connections; node:http calls it. */
  setNoDelay(): this {
    return this;
  }

  /** Nothing to do on these connections; node:http calls it. */
  setKeepAlive(): this {
    return this;
  }

  #active(): void {
    this.#clearIdle();
    if (this.#idleMs > 0 && !this.destroyed) {
      this.#idle = setTimeout(() => this.emit("timeout"), this.#idleMs);
    }
  }

  #clearIdle(): void {
    if (this.#idle !== null) clearTimeout(this.#idle);
    this.#idle = null;
  }
}

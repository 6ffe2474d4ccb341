/**
 * A Deno connection as a Node stream, so that node:http can serve a connection the guarded server
 * accepted itself (Deno.serve and node:http's own listener accept for themselves, and neither
 * survives running out of descriptors; see guarded_server.ts). It reads only while node:http
 * wants more, writes with backpressure, and keeps Node's socket idle timer (node:http ends a
 * kept-alive connection by it).
 */
import { Duplex } from "node:stream";
import { Buffer } from "node:buffer";

/**
 * What one read asks for. Reads land in one buffer per connection and what came is copied out,
 * so a connection costs one allocation, not one 16 KiB zeroed buffer per read.
 */
const READ_SIZE = 16 * 1024;
/**
 * The idle timer is not re-armed per read or write: activity stamps the clock, and the one timer
 * armed checks the stamp when it fires and re-arms for what is left.
 */
/**
 * After node:http ends a connection, what the client still sends is read and dropped, so that a
 * client writing a body the door refused reads its answer; at most this much, this long.
 */
const DRAIN_BYTES = 24 * 1024 * 1024;
const DRAIN_MS = 5_000;
/** Chunks written together smaller than this are joined into one write (a head and its body). */
const JOIN_BELOW = 16 * 1024;
/** The most a connection's writes hold before node:http is asked to wait (a chunk of 64 KiB). */
const WRITE_HIGH_WATER = 128 * 1024;

/** One accepted connection, as the socket node:http expects. */
export class ConnStream extends Duplex {
  readonly #conn: Deno.Conn;
  #reading = false;
  #idleMs = 0;
  #idle: ReturnType<typeof setTimeout> | null = null;
  /** When the armed idle timer fires (performance.now()). */
  #idleAt = 0;
  /** The last read or write (performance.now()). */
  #lastActive = 0;
  #buffer: Uint8Array | null = null;
  /** Bytes dropped since node:http ended the connection; -1 before. */
  #dropped = -1;
  #drainTimer: ReturnType<typeof setTimeout> | undefined;

  /** Wraps `conn`; closing the stream closes the connection. */
  constructor(conn: Deno.Conn) {
    super({ allowHalfOpen: true, writableHighWaterMark: WRITE_HIGH_WATER });
    this.#conn = conn;
    // An answer goes as soon as it is written (node:http's servers ask the same of their sockets).
    this.setNoDelay(true);
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
    const buffer = this.#buffer ??= new Uint8Array(READ_SIZE);
    while (!this.destroyed) {
      const count = await this.#conn.read(buffer);
      this.#touch();
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
      if (!this.push(Buffer.from(buffer.subarray(0, count)))) break;
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
    this.#writeChunks(chunks).then(() => done(), (error) => done(error));
  }

  /** Small chunks are joined into one write; a large one is written as it is, not copied. */
  async #writeChunks(chunks: { chunk: Uint8Array }[]): Promise<void> {
    let small: Uint8Array[] = [];
    let smallBytes = 0;
    for (const { chunk } of chunks) {
      if (chunk.byteLength < JOIN_BELOW) {
        small.push(chunk);
        smallBytes += chunk.byteLength;
        continue;
      }
      if (smallBytes > 0) await this.#writeAll(join(small, smallBytes));
      small = [];
      smallBytes = 0;
      await this.#writeAll(chunk);
    }
    if (smallBytes > 0) await this.#writeAll(join(small, smallBytes));
  }

  async #writeAll(chunk: Uint8Array): Promise<void> {
    let at = 0;
    while (at < chunk.length) {
      at += await this.#conn.write(at === 0 ? chunk : chunk.subarray(at));
      this.#touch();
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
    const now = performance.now();
    this.#lastActive = now;
    if (ms <= 0 || this.destroyed) this.#clearIdle();
    // A timer that fires sooner than asked re-arms itself; one that fires later is re-armed.
    else if (this.#idle === null || this.#idleAt > now + ms) this.#arm(ms);
    return this;
  }

  /** node:http asks for no delay (its default): a TCP connection sends each write at once. */
  setNoDelay(noDelay = true): this {
    const conn = this.#conn as Partial<Deno.TcpConn>;
    if (typeof conn.setNoDelay === "function" && this.#conn.remoteAddr.transport === "tcp") {
      try {
        conn.setNoDelay(noDelay);
      } catch {
        // Closed already.
      }
    }
    return this;
  }

  /** Nothing to do on these connections; node:http calls it. */
  setKeepAlive(): this {
    return this;
  }

  /** A read or a write: the idle time starts again (a timer that fired is armed again). */
  #touch(): void {
    this.#lastActive = performance.now();
    if (this.#idle === null && this.#idleMs > 0 && !this.destroyed) this.#arm(this.#idleMs);
  }

  #arm(ms: number): void {
    if (this.#idle !== null) clearTimeout(this.#idle);
    this.#idleAt = performance.now() + ms;
    this.#idle = setTimeout(() => this.#idleCheck(), ms);
  }

  /** The armed timer fired: `timeout` if nothing moved for idleMs since, else wait the rest. */
  #idleCheck(): void {
    this.#idle = null;
    if (this.#idleMs <= 0 || this.destroyed) return;
    const left = this.#lastActive + this.#idleMs - performance.now();
    if (left > 0) this.#arm(left);
    else this.emit("timeout");
  }

  #clearIdle(): void {
    if (this.#idle !== null) clearTimeout(this.#idle);
    this.#idle = null;
  }
}

function join(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}

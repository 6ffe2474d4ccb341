/**
 * The proxy's byte plumbing: a connection read into a buffer the parsers look at before anything
 * is forwarded, a deadline that closes a connection, whole writes, the copy loop of a tunnel, and
 * the lingering close that lets a refusal reach a client that is still sending, and a plain
 * request's body sent on to its end and no further.
 */
import type { BodyEnd } from "./request_body.ts";

const CHUNK = 64 * 1024;
const MAX_PUMP_CHUNK = 256 * 1024;

/** A connection whose bytes are read into `buffered` until a parser has what it needs. */
export class Inbound {
  #buffer = new Uint8Array(4096);
  #length = 0;

  constructor(readonly conn: Deno.Conn) {}

  /** The bytes read and not yet taken. */
  get buffered(): Uint8Array {
    return this.#buffer.subarray(0, this.#length);
  }

  /**
   * Reads until at least `count` bytes are buffered, never more than `cap` in all; false if the
   * connection ended (or was closed) first.
   */
  async fill(count: number, cap = count): Promise<boolean> {
    while (this.#length < count) {
      if (!await this.readMore(cap)) return false;
    }
    return true;
  }

  /** Reads once more (at most up to `cap` bytes buffered); false if the connection ended. */
  async readMore(cap: number): Promise<boolean> {
    const room = cap - this.#length;
    if (room <= 0) return false;
    if (this.#buffer.length - this.#length < Math.min(room, 4096)) {
      const grown = new Uint8Array(Math.min(cap, Math.max(this.#buffer.length * 2, 4096)));
      grown.set(this.buffered);
      this.#buffer = grown;
    }
    let read: number | null;
    try {
      read = await this.conn.read(
        this.#buffer.subarray(this.#length, this.#length + Math.min(room, CHUNK)),
      );
    } catch {
      return false;
    }
    if (read === null) return false;
    this.#length += read;
    return true;
  }

  /** Takes the first `count` buffered bytes (all of them if not given), as a copy. */
  take(count = this.#length): Uint8Array {
    const taken = this.#buffer.slice(0, count);
    this.#buffer.copyWithin(0, count, this.#length);
    this.#length -= count;
    return taken;
  }
}

/** A timer that closes `conn` after `ms` unless cleared first. */
export class Deadline {
  readonly #timer: ReturnType<typeof setTimeout>;
  #expired = false;

  constructor(conn: Deno.Conn, ms: number) {
    this.#timer = setTimeout(() => {
      this.#expired = true;
      closeQuietly(conn);
    }, ms);
  }

  /** Whether it closed the connection. */
  get expired(): boolean {
    return this.#expired;
  }

  /** Stops it. */
  clear(): void {
    clearTimeout(this.#timer);
  }
}

/** Writes all of `bytes` to `conn`. */
export async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) offset += await conn.write(bytes.subarray(offset));
}

/** Closes `conn`, already closed or not. */
export function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}

/**
 * Copies `from` into `to` until `from` ends, then ends `to`'s writing side. Resolves either way;
 * true if `from` ended cleanly. It reads the next chunk while the last is written, into buffers
 * that start small and grow (to 256 KiB) while reads fill them, so an idle tunnel holds little
 * and a download moves in large chunks.
 */
export async function pump(from: Deno.Conn, to: Deno.Conn): Promise<boolean> {
  let size = 16 * 1024;
  let buffers = [new Uint8Array(size), new Uint8Array(size)];
  let which = 0;
  let writing: Promise<void> = Promise.resolve();
  try {
    for (;;) {
      const buffer = buffers[which];
      const read = await from.read(buffer);
      await writing;
      if (read === null) break;
      writing = writeAll(to, buffer.subarray(0, read));
      // The write holds this buffer, so a grown pair starts with the other.
      if (read === size && size < MAX_PUMP_CHUNK) {
        size *= 4;
        buffers = [buffer, new Uint8Array(size)];
        which = 1;
      } else {
        which ^= 1;
      }
    }
  } catch {
    await writing.catch(() => {});
    return false;
  }
  try {
    await to.closeWrite();
  } catch {
    // The other side is gone already.
  }
  return true;
}

/**
 * Writes `answer`, ends the writing side, and reads what the client still sends (up to 64 KiB or
 * one second) before closing, so its socket does not reset the answer away.
 */
export async function answerAndClose(conn: Deno.Conn, answer: Uint8Array): Promise<void> {
  try {
    await writeAll(conn, answer);
    await conn.closeWrite();
    const deadline = new Deadline(conn, 1000);
    const sink = new Uint8Array(CHUNK);
    let drained = 0;
    while (drained < CHUNK) {
      const read = await conn.read(sink);
      if (read === null) break;
      drained += read;
    }
    deadline.clear();
  } catch {
    // The client left; nothing more to tell it.
  }
  closeQuietly(conn);
}

/** Bytes as Latin-1 text, one character a byte. */
export function latin1(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 4096) {
    text += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return text;
}

/** Latin-1 text as bytes, one byte a character. */
export function latin1Bytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
  return bytes;
}

/**
 * Sends the origin the request's body and nothing past it: a second request on the connection
 * (whose Host header could name another host) stays with the proxy, which drops it.
 */
export async function sendBody(inbound: Inbound, origin: Deno.Conn, end: BodyEnd): Promise<void> {
  try {
    let pending = inbound.take();
    const buffer = new Uint8Array(64 * 1024);
    for (;;) {
      const { out } = end.pass(pending);
      if (out.length > 0) await writeAll(origin, out);
      if (end.done || end.bad) return;
      const read = await inbound.conn.read(buffer);
      if (read === null) return;
      pending = buffer.subarray(0, read);
    }
  } catch {
    // Either side is gone.
  }
}

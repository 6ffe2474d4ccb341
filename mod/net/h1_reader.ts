/**
 * The read side of one connection an HTTP/1.1 door serves: one buffer, filled by one read at a
 * time (a second caller waits for the read under way, so the head's reader and the watch for a
 * client gone never race), from which a head is found and a body's bytes are taken.
 */

const START_SIZE = 16 * 1024;
/** A head of up to 16 KiB and its blank line must fit whole. */
const MOST_SIZE = 32 * 1024;
const CR = 13;
const LF = 10;

/** Told when the door starts and stops waiting on its client (the door's stall deadline). */
export interface Stall {
  begin(): void;
  end(): void;
}

/** Buffered reads of a connection. */
export class ConnReader {
  readonly #conn: Deno.Conn;
  /** Told of a read something waits on (a body's); set by the connection. */
  stall: Stall | null = null;
  #buffer: Uint8Array<ArrayBuffer> | null = null;
  #start = 0;
  #end = 0;
  /** Where find() stopped looking, from #start. */
  #scanned = 0;
  #reading: Promise<number | null> | null = null;
  #ended = false;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  /** Bytes read and not yet taken. */
  get buffered(): number {
    return this.#end - this.#start;
  }

  /** Where the blank line that ends a head starts (from the unread bytes), -1 if not yet read. */
  find(limit: number): number {
    const buffer = this.#buffer;
    if (buffer === null) return -1;
    const stop = Math.min(this.#end, this.#start + limit + 4);
    let at = this.#start + Math.max(0, this.#scanned - 3);
    while (at + 3 < stop) {
      const cr = buffer.indexOf(CR, at);
      if (cr < 0 || cr + 3 >= stop) break;
      if (buffer[cr + 1] === LF && buffer[cr + 2] === CR && buffer[cr + 3] === LF) {
        this.#scanned = 0;
        return cr - this.#start;
      }
      at = cr + 1;
    }
    this.#scanned = this.#end - this.#start;
    return -1;
  }

  /** Where the next CRLF starts (from the unread bytes), -1 if not yet read. */
  findLineEnd(): number {
    const buffer = this.#buffer;
    if (buffer === null) return -1;
    let at = this.#start;
    while (true) {
      const cr = buffer.indexOf(CR, at);
      if (cr < 0 || cr + 1 >= this.#end) return -1;
      if (buffer[cr + 1] === LF) return cr - this.#start;
      at = cr + 1;
    }
  }

  /** The next `count` bytes, as a view valid until the next fill(). */
  view(count: number): Uint8Array<ArrayBuffer> {
    const view = this.#buffer!.subarray(this.#start, this.#start + count);
    this.#start += count;
    this.#scanned = 0;
    return view;
  }

  /** The next `count` bytes, copied. */
  take(count: number): Uint8Array<ArrayBuffer> {
    const copy = this.#buffer!.slice(this.#start, this.#start + count);
    this.#start += count;
    this.#scanned = 0;
    return copy;
  }

  /** Drops the next `count` bytes. */
  skip(count: number): void {
    this.#start += count;
    this.#scanned = 0;
  }

  /** Drops every byte read and not taken. */
  discard(): void {
    this.#start = this.#end;
    this.#scanned = 0;
  }

  /**
   * Reads once more into the buffer: the bytes read, or null at the connection's end. A `timed`
   * read (a body's) is what the door's stall deadline watches.
   */
  fill(timed = false): Promise<number | null> {
    const stall = timed ? this.stall : null;
    if (stall !== null) {
      stall.begin();
      const read = this.fill();
      read.then(() => stall.end(), () => stall.end());
      return read;
    }
    if (this.#reading !== null) return this.#reading;
    if (this.#ended) return Promise.resolve(null);
    const buffer = this.#room();
    const reading = this.#conn.read(buffer.subarray(this.#end)).then((count) => {
      this.#reading = null;
      if (count === null) this.#ended = true;
      else this.#end += count;
      return count;
    }, (error) => {
      this.#reading = null;
      this.#ended = true;
      throw error;
    });
    this.#reading = reading;
    return reading;
  }

  /** The buffer with room after #end: what was taken is moved out, and a head may grow it. */
  #room(): Uint8Array<ArrayBuffer> {
    let buffer = this.#buffer ??= new Uint8Array(START_SIZE);
    if (this.#start === this.#end) {
      this.#start = this.#end = 0;
    } else if (this.#end === buffer.length && this.#start > 0) {
      buffer.copyWithin(0, this.#start, this.#end);
      this.#end -= this.#start;
      this.#start = 0;
    }
    if (this.#end === buffer.length && buffer.length < MOST_SIZE) {
      const bigger = new Uint8Array(buffer.length * 2);
      bigger.set(buffer);
      this.#buffer = buffer = bigger;
    }
    return buffer;
  }
}

/**
 * A request's body on an HTTP/1.1 connection, read from the wire only as the handler reads it:
 * a declared length counted down, or chunked coding decoded (its sizes, its trailers read and
 * dropped). A body the client ends before its last byte fails with IncompleteBodyError, which
 * the door's handler answers with its 400; a chunk framed wrongly fails the body and ends the
 * connection after the answer.
 */
import { IncompleteBodyError } from "./fetch_bridge.ts";
import type { ConnReader } from "./h1_reader.ts";

/** The longest chunk-size or trailer line read. */
const MOST_LINE = 4096;
/** The most of a chunked body's trailer section read, as of a head (16 KiB). */
const MOST_TRAILERS = 16 * 1024;
const CHUNK_SIZE = /^([0-9a-fA-F]{1,12})[ \t]*(;.*)?$/;
const text = new TextDecoder();

/** One request's body. */
export class BodyReader {
  readonly #reader: ConnReader;
  /** Bytes left of the declared length, or of the chunk under way. */
  #left: number;
  readonly #chunked: boolean;
  /** Chunked: what comes next when #left is 0. */
  #next: "size" | "crlf" = "size";
  #done = false;
  #failed = false;
  readonly #ended = Promise.withResolvers<boolean>();
  #reading: Promise<Uint8Array | null> | null = null;

  /** `length` is the declared length, -1 for chunked, 0 for none. */
  constructor(reader: ConnReader, length: number) {
    this.#reader = reader;
    this.#chunked = length < 0;
    this.#left = length < 0 ? 0 : length;
    if (length === 0) this.#finish();
  }

  /** The whole body was read. */
  get done(): boolean {
    return this.#done;
  }

  /** The body failed (cut short, or framed wrongly): the connection cannot carry another request. */
  get failed(): boolean {
    return this.#failed;
  }

  /** Resolves when the body ends: true when read whole, false when it failed. */
  get ended(): Promise<boolean> {
    return this.#ended.promise;
  }

  /** A declared length all read already: the bytes, a view valid until the next read. */
  takeWhole(): Uint8Array<ArrayBuffer> {
    const bytes = this.#reader.view(this.#left);
    this.#left = 0;
    this.#finish();
    return bytes;
  }

  /**
   * The body as a stream the handler reads; a cancel leaves the rest to drain(). `beforeRead`
   * is awaited before the first read (the door's 100 Continue).
   */
  stream(beforeRead?: () => Promise<void>): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        try {
          if (beforeRead !== undefined) {
            const first = beforeRead;
            beforeRead = undefined;
            await first();
          }
          const piece = await this.next();
          if (piece === null) controller.close();
          else controller.enqueue(piece);
        } catch (error) {
          controller.error(error);
        }
      },
    }, { highWaterMark: 0 });
  }

  /** Not given to the handler (a GET's): drain() reads it off. */
  cancel(): void {}

  /** Reads and drops the rest; false when it fails or passes `most` bytes. */
  async drain(most: number): Promise<boolean> {
    let dropped = 0;
    try {
      while (!this.#done) {
        const piece = await this.next(false);
        if (piece === null) break;
        dropped += piece.byteLength;
        if (dropped > most) return false;
      }
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The next bytes of the body (copied unless `copy` is false), or null at its end. Calls are
   * served one after another (a read the handler cancelled may still be under way when the
   * rest is drained).
   */
  next(copy = true): Promise<Uint8Array | null> {
    if (this.#reading === null) {
      const reading = this.#readNext(copy).finally(() => {
        if (this.#reading === reading) this.#reading = null;
      });
      return this.#reading = reading;
    }
    const after = this.#reading.then(() => this.#readNext(copy), () => this.#readNext(copy));
    this.#reading = after;
    after.finally(() => {
      if (this.#reading === after) this.#reading = null;
    }).catch(() => {});
    return after;
  }

  async #readNext(copy: boolean): Promise<Uint8Array | null> {
    if (this.#done) return null;
    if (this.#failed) throw new IncompleteBodyError();
    try {
      if (this.#chunked && this.#left === 0) {
        if (!(await this.#chunkStart())) return null;
      }
      const reader = this.#reader;
      if (reader.buffered === 0 && (await reader.fill(true)) === null) {
        throw new IncompleteBodyError();
      }
      const count = Math.min(this.#left, reader.buffered);
      const piece = copy ? reader.take(count) : reader.view(count);
      this.#left -= count;
      if (this.#left === 0) {
        if (this.#chunked) this.#next = "crlf";
        else this.#finish();
      }
      return piece;
    } catch (error) {
      this.#failed = true;
      this.#ended.resolve(false);
      if (error instanceof IncompleteBodyError || !(error instanceof BodyFramingError)) {
        throw new IncompleteBodyError();
      }
      throw error;
    }
  }

  /** The next chunk's size line (after the last chunk's CRLF); false at the last chunk. */
  async #chunkStart(): Promise<boolean> {
    if (this.#next === "crlf") {
      const end = await this.#line();
      if (end !== "") throw new BodyFramingError("a chunk is longer than its size");
      this.#next = "size";
    }
    const line = await this.#line();
    const size = CHUNK_SIZE.exec(line);
    if (size === null) throw new BodyFramingError("a chunk's size line is not hexadecimal");
    const count = parseInt(size[1], 16);
    if (count > 0) {
      this.#left = count;
      return true;
    }
    // The last chunk: trailers, each read and dropped, to the blank line; no more of them than
    // a head may be.
    let trailers = 0;
    for (let line = await this.#line(); line !== ""; line = await this.#line()) {
      trailers += line.length + 2;
      if (trailers > MOST_TRAILERS) {
        throw new BodyFramingError(
          "its trailers are larger than 16 KiB, the most a gurt door reads",
        );
      }
    }
    this.#finish();
    return false;
  }

  /** The next line (without its CRLF). */
  async #line(): Promise<string> {
    const reader = this.#reader;
    let end = reader.findLineEnd();
    while (end < 0) {
      if (reader.buffered > MOST_LINE) throw new BodyFramingError("a chunk's line is too long");
      if ((await reader.fill(true)) === null) throw new IncompleteBodyError();
      end = reader.findLineEnd();
    }
    const line = text.decode(reader.view(end));
    reader.skip(2);
    return line;
  }

  #finish(): void {
    this.#done = true;
    this.#ended.resolve(true);
  }
}

/** A chunked body the client framed wrongly. */
export class BodyFramingError extends Error {
  constructor(what: string) {
    super(`the request's chunked body is not well framed: ${what}`);
    this.name = "BodyFramingError";
  }
}

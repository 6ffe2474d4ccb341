/**
 * A fetch Response written on an HTTP/1.1 connection: its head, then its body, all at once with
 * its length when it is already in memory (a JSON answer), else a chunk at a time as it comes
 * (chunked coding, or as it is when the handler gave a length), the next chunk asked for while
 * one is written and no more, so that a slow client holds the answer back.
 */
import { reasonOf } from "./h1_head.ts";
import type { Stall } from "./h1_reader.ts";
import { bodyStart } from "./fetch_bridge.ts";

/** Chunks written together smaller than this are joined into one write. */
const JOIN_BELOW = 16 * 1024;
/** The most of a streamed answer waiting while a write is under way. */
const BATCH_BYTES = 128 * 1024;
const encoder = new TextEncoder();
const LAST_CHUNK = encoder.encode("0\r\n\r\n");
const CRLF = encoder.encode("\r\n");

/** How one answer goes. */
export interface AnswerOptions {
  /** A HEAD request's answer: the head only. */
  head: boolean;
  /** An HTTP/1.0 client: no chunked coding. */
  http10: boolean;
  /** The connection ends after this answer. */
  close: boolean;
  /** Aborted when the client is gone; a write that fails aborts it. */
  gone: AbortController;
  /** Told when the answer's body broke off after its head was sent. */
  onBrokenAnswer(error: unknown): void;
  /** The connection's own buffer for a small answer, made whole in it without an allocation. */
  scratch: Uint8Array;
  /** Told while a write waits on the client (the door's stall deadline). */
  stall: Stall;
}

/** How an answer went: `sent` whole or not, and whether the connection must end after it. */
export interface Answered {
  sent: boolean;
  close: boolean;
}

/** Writes `response` on `conn`. */
export async function writeAnswer(
  conn: Writer,
  response: Response,
  options: AnswerOptions,
): Promise<Answered> {
  conn = timedWrites(conn, options.stall);
  const status = response.status;
  let head = `HTTP/1.1 ${status} ${response.statusText || reasonOf(status)}\r\n`;
  let length: string | null = null;
  let close = options.close;
  let dated = false;
  for (const [name, value] of response.headers) {
    // A length that is not one (a handler's mistake) is dropped: the body frames itself.
    if (name === "content-length") length = /^[0-9]{1,15}$/.test(value) ? value : null;
    else if (name === "connection") close ||= /(^|,)\s*close\s*(,|$)/i.test(value);
    else if (name !== "transfer-encoding" && name !== "keep-alive") {
      head += `${name}: ${value}\r\n`;
      dated ||= name === "date";
    }
  }
  if (!dated) head += `date: ${httpDate()}\r\n`;
  const bodiless = status < 200 || status === 204 || status === 304;
  const gone = options.gone;
  const write = async (parts: Uint8Array[]): Promise<boolean> => {
    try {
      await writeParts(conn, parts);
      return true;
    } catch (error) {
      gone.abort(error);
      return false;
    }
  };
  const connection = close
    ? "connection: close\r\n"
    : options.http10
    ? "connection: keep-alive\r\n"
    : "";
  if (response.body === null || bodiless) {
    response.body?.cancel().catch(() => {});
    // No body is a body of 0 bytes, whatever the handler declared; a HEAD's length is its GET's.
    if (!bodiless) head += `content-length: ${options.head ? length ?? "0" : "0"}\r\n`;
    return { sent: await write([inScratch(options.scratch, head + connection + "\r\n")]), close };
  }
  const reader = response.body.getReader();
  /** The client went while the body was under way (or a write failed): its read stops. */
  let lost = false;
  const stop = () => {
    lost = true;
    reader.cancel(gone.signal.reason).catch(() => {});
  };
  let listening = false;
  try {
    const start = await bodyStart(reader);
    if (start.pending === null) {
      const whole = join(start.chunks);
      const size = options.head && whole.byteLength === 0 && length !== null
        ? length
        : whole.byteLength;
      head += `content-length: ${size}\r\n${connection}\r\n`;
      const bytes = inScratch(options.scratch, head, options.head ? undefined : whole);
      return { sent: await write([bytes]), close };
    }
    // A body still coming: a client gone from now on stops its read. One that ended its side
    // before (its read saw the end) may still read, so its answer goes as an answer in memory
    // does; a write that fails ends it.
    gone.signal.addEventListener("abort", stop, { once: true });
    listening = true;
    if (options.head) {
      stop();
      if (length !== null) head += `content-length: ${length}\r\n`;
      return { sent: await write([encoder.encode(head + connection + "\r\n")]), close };
    }
    const chunked = length === null && !options.http10;
    if (length !== null) head += `content-length: ${length}\r\n`;
    else if (chunked) head += "transfer-encoding: chunked\r\n";
    // HTTP/1.0 and no length: the connection's end is the body's.
    else close = true;
    head += close ? "connection: close\r\n" : connection;
    // A declared length is what goes, no byte more: a body that overruns it is cut there (its
    // rest would be read as the next answer) and one that falls short ends the connection.
    let left = length === null ? Infinity : Number(length);
    const take = (chunk: Uint8Array): Uint8Array => {
      const piece = chunk.byteLength > left ? chunk.subarray(0, left) : chunk;
      left -= piece.byteLength;
      return piece;
    };
    // A write that fails aborts the signal, which stops the read; if it was aborted already
    // (the client ended its side before), the read is stopped here.
    const pipe = new WritePipe(conn, (error) => gone.signal.aborted ? stop() : gone.abort(error));
    const parts: Uint8Array[] = [encoder.encode(head + "\r\n")];
    let over = false;
    for (const chunk of start.chunks) {
      over ||= chunk.byteLength > left;
      frame(parts, take(chunk), chunked);
    }
    await pipe.push(parts);
    let next = start.pending;
    while (!over) {
      const { done, value } = await next;
      if (done) break;
      if (lost || pipe.failed !== null) break;
      if (value.byteLength > left) {
        over = true;
        const framed: Uint8Array[] = [];
        frame(framed, take(value), chunked);
        await pipe.push(framed);
        break;
      }
      // The next chunk is asked for while this one is written.
      next = reader.read();
      next.catch(() => {});
      const framed: Uint8Array[] = [];
      frame(framed, take(value), chunked);
      await pipe.push(framed);
    }
    if (over) {
      reader.cancel(new Error("the answer's body is longer than its content-length")).catch(
        () => {},
      );
    }
    if (chunked && !lost && pipe.failed === null) await pipe.push([LAST_CHUNK]);
    await pipe.done();
    if (pipe.failed !== null || lost) return { sent: false, close: true };
    // A body other than its declared length: the connection cannot frame another answer.
    if (over || left > 0 && left !== Infinity) {
      options.onBrokenAnswer(
        new Error(`the answer's body is not its content-length of ${length} bytes`),
      );
      return { sent: false, close: true };
    }
    return { sent: true, close };
  } catch (error) {
    if (!gone.signal.aborted) options.onBrokenAnswer(error);
    return { sent: false, close: true };
  } finally {
    if (listening) gone.signal.removeEventListener("abort", stop);
  }
}

/** What the answer is written to: the connection's write. */
type Writer = Pick<Deno.Conn, "write">;

/** `conn`'s writes, each told to `stall` while it waits. */
function timedWrites(conn: Writer, stall: Stall): Writer {
  return {
    write: (bytes) => {
      stall.begin();
      const written = conn.write(bytes);
      written.then(() => stall.end(), () => stall.end());
      return written;
    },
  };
}

/**
 * The head (and a body) in the connection's scratch buffer when they fit (a head is ASCII, one
 * byte a character), else in a buffer of their own.
 */
function inScratch(scratch: Uint8Array, head: string, body?: Uint8Array): Uint8Array {
  const size = head.length + (body?.byteLength ?? 0);
  if (size <= scratch.byteLength) {
    const { written } = encoder.encodeInto(head, scratch);
    if (written === head.length) {
      if (body !== undefined) scratch.set(body, written);
      return scratch.subarray(0, size);
    }
  }
  const head8 = encoder.encode(head);
  return body === undefined ? head8 : join([head8, body]);
}

/**
 * A streamed answer's writes: one at a time, and what comes while one is under way joined into
 * the next (an answer of many small events costs a write per turn, not one per event); push
 * waits while more than BATCH_BYTES wait, so a client that reads slowly holds the answer back.
 */
class WritePipe {
  readonly #conn: Writer;
  readonly #onFail: (error: unknown) => void;
  #parts: Uint8Array[] = [];
  #bytes = 0;
  #writing: Promise<void> | null = null;
  /** What a write failed with (the client gone); null while they work. */
  failed: unknown = null;

  /** `onFail` is told at once when a write fails (the client is gone). */
  constructor(conn: Writer, onFail: (error: unknown) => void) {
    this.#conn = conn;
    this.#onFail = onFail;
  }

  async push(parts: Uint8Array[]): Promise<void> {
    if (this.failed !== null) return;
    for (const part of parts) {
      this.#parts.push(part);
      this.#bytes += part.byteLength;
    }
    if (this.#writing === null) this.#flush();
    else if (this.#bytes >= BATCH_BYTES) await this.#writing;
  }

  /** Waits for every part pushed to be written (or a write to fail). */
  async done(): Promise<void> {
    while (this.#writing !== null) await this.#writing;
  }

  #flush(): void {
    const parts = this.#parts;
    this.#parts = [];
    this.#bytes = 0;
    this.#writing = writeParts(this.#conn, parts).then(() => {
      this.#writing = null;
      if (this.#parts.length > 0) this.#flush();
    }, (error) => {
      this.#writing = null;
      this.failed = error ?? new Error("the write failed");
      this.#parts = [];
      this.#onFail(this.failed);
    });
  }
}

function frame(parts: Uint8Array[], chunk: Uint8Array, chunked: boolean): void {
  if (chunk.byteLength === 0) return;
  if (!chunked) {
    parts.push(chunk);
    return;
  }
  parts.push(encoder.encode(`${chunk.byteLength.toString(16)}\r\n`), chunk, CRLF);
}

/** Writes parts in order, joining runs of small ones into one write. */
async function writeParts(conn: Writer, parts: Uint8Array[]): Promise<void> {
  let run: Uint8Array[] = [];
  for (const part of parts) {
    if (part.byteLength < JOIN_BELOW) {
      run.push(part);
      continue;
    }
    if (run.length > 0) await writeAll(conn, join(run));
    run = [];
    await writeAll(conn, part);
  }
  if (run.length > 0) await writeAll(conn, join(run));
}

async function writeAll(conn: Writer, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.byteLength;) {
    at += await conn.write(at === 0 ? bytes : bytes.subarray(at));
  }
}

function join(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  let size = 0;
  for (const chunk of chunks) size += chunk.byteLength;
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}

let dateSecond = 0;
let dateText = "";

/** The Date header's value, made once a second. */
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

/**
 * tasks/<id>/worker.log, capped at gurt.toml's `[tasks] worker_log_bytes`: a worker that prints
 * without end must not fill the disk beside the audit log. Past the cap the log keeps its head (a
 * quarter of the cap: how the worker started) and its newest tail, with one line between them that
 * says how many bytes of the worker's output were dropped there:
 *
 *   [gurt: 5123456 bytes of worker output dropped]
 *
 * The file is rewritten in place only when a write would take it past the cap, and then it falls
 * back to about three quarters of it, so most writes are plain appends. A worker started again (the
 * core restarted) appends to the same log, and its count goes on from the line already there.
 */

/** The smallest cap gurt.toml accepts; below it the head and tail would hold next to nothing. */
export const MIN_WORKER_LOG_BYTES = 4096;

/** Room kept for the marker line: its longest form, with a 16-digit count, is 59 bytes. */
const MARKER_ROOM = 64;

/** The marker line as it stands right after the head. */
const MARKER = /^\n\[gurt: (\d{1,16}) bytes of worker output dropped\]\n/;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A worker's log file, written through `write` only, never past its cap. */
export class WorkerLog {
  readonly #file: Deno.FsFile;
  readonly #head: number;
  readonly #cap: number;
  /** The tail kept when the file is rewritten: what is left of the cap after head, marker, slack. */
  readonly #tail: number;
  #size: number;
  /** Writes run one after the other (stdout and stderr share the file). */
  #queue: Promise<void> = Promise.resolve();

  private constructor(file: Deno.FsFile, cap: number, size: number) {
    this.#file = file;
    this.#cap = cap;
    this.#head = Math.floor(cap / 4);
    this.#tail = cap - this.#head - Math.floor(cap / 4) - MARKER_ROOM;
    this.#size = size;
  }

  /** Opens (or makes, 0600) the log at `path`, capped at `cap` bytes, to go on after what it holds. */
  static async open(path: string, cap: number): Promise<WorkerLog> {
    if (!Number.isSafeInteger(cap) || cap < MIN_WORKER_LOG_BYTES) {
      throw new RangeError(`a worker log's cap must be ${MIN_WORKER_LOG_BYTES} bytes or more`);
    }
    const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
    try {
      const size = (await file.stat()).size;
      await file.seek(size, Deno.SeekMode.Start);
      return new WorkerLog(file, cap, size);
    } catch (error) {
      file.close();
      throw error;
    }
  }

  /** Appends `chunk` of the worker's output, after every write asked for before it. */
  write(chunk: Uint8Array): Promise<void> {
    const done = this.#queue.then(() =>
      this.#write(chunk).catch(async (error) => {
        await this.#resync();
        throw error;
      })
    );
    this.#queue = done.catch(() => {});
    return done;
  }

  /** Closes the file once the writes asked for have ended. */
  async close(): Promise<void> {
    await this.#queue;
    this.#file.close();
  }

  async #write(chunk: Uint8Array): Promise<void> {
    if (this.#size < this.#head) {
      const first = chunk.subarray(0, this.#head - this.#size);
      await this.#append(first);
      chunk = chunk.subarray(first.length);
    }
    if (chunk.length === 0) return;
    if (this.#size + chunk.length <= this.#cap) await this.#append(chunk);
    else await this.#rewrite(chunk);
  }

  /** After a failed write: the size and position from the file itself, so the cap still holds. */
  async #resync(): Promise<void> {
    try {
      this.#size = (await this.#file.stat()).size;
      await this.#file.seek(this.#size, Deno.SeekMode.Start);
    } catch {
      // The next write fails too, and is dropped as this one was.
    }
  }

  async #append(bytes: Uint8Array): Promise<void> {
    await writeAll(this.#file, bytes);
    this.#size += bytes.length;
  }

  /**
   * Keeps the head, then the marker, then the newest output (what the file holds after the head,
   * followed by `chunk`), cut to the tail's size and to a line's start where one is near.
   */
  async #rewrite(chunk: Uint8Array): Promise<void> {
    const previous = await this.#previousMarker();
    // The bytes of output after the head (and its marker, if any), then the chunk.
    const held = this.#size - this.#head - previous.length;
    let tail: Uint8Array;
    if (chunk.length >= this.#tail) {
      tail = chunk.slice(chunk.length - this.#tail);
    } else {
      // Never reaches back into the marker: the file is past the cap only when it holds more than
      // head, marker room and tail together.
      const fromFile = Math.min(this.#tail - chunk.length, held);
      tail = new Uint8Array(fromFile + chunk.length);
      await this.#readAt(this.#size - fromFile, tail.subarray(0, fromFile));
      tail.set(chunk, fromFile);
    }
    tail = fromLineStart(tail);
    const dropped = previous.dropped + held + chunk.length - tail.length;
    const marker = encoder.encode(`\n[gurt: ${dropped} bytes of worker output dropped]\n`);
    await this.#file.truncate(this.#head);
    await this.#file.seek(this.#head, Deno.SeekMode.Start);
    this.#size = this.#head;
    await this.#append(marker);
    await this.#append(tail);
  }

  /** The marker right after the head, if the file has one: its count and its length in bytes. */
  async #previousMarker(): Promise<{ dropped: number; length: number }> {
    const bytes = new Uint8Array(Math.min(MARKER_ROOM, this.#size - this.#head));
    await this.#readAt(this.#head, bytes);
    const found = MARKER.exec(decoder.decode(bytes));
    if (found === null) return { dropped: 0, length: 0 };
    return { dropped: Number(found[1]), length: encoder.encode(found[0]).length };
  }

  /** Fills `into` from `offset`, then puts the file's position back at its end. */
  async #readAt(offset: number, into: Uint8Array): Promise<void> {
    await this.#file.seek(offset, Deno.SeekMode.Start);
    let at = 0;
    while (at < into.length) {
      const n = await this.#file.read(into.subarray(at));
      if (n === null) throw new Error("the worker log ended before its size said");
      at += n;
    }
    await this.#file.seek(this.#size, Deno.SeekMode.Start);
  }
}

/** `bytes` from just after its first newline, where that is in its first quarter; else whole. */
function fromLineStart(bytes: Uint8Array): Uint8Array {
  const newline = bytes.subarray(0, Math.floor(bytes.length / 4)).indexOf(0x0a);
  return newline === -1 ? bytes : bytes.subarray(newline + 1);
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await file.write(bytes.subarray(at));
}

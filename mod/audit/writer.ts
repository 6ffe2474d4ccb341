/**
 * The single audit writer (docs/audit.md#the-chain): holds audit/.lock for its life, runs the
 * startup check, appends records chained by hash, one file per UTC date, and resolves an append
 * only after the fdatasync that covers it. Appends that arrive while a sync runs share the next one
 * (group commit). After any failed write or sync it writes nothing more.
 */
import { AuditChainBrokenError, AuditLockedError, AuditNothingToAcceptError } from "./errors.ts";
import { AuditUnavailableError } from "./errors.ts";
import { auditDir, fileNameFor } from "./files.ts";
import { sha256Hex } from "./hash.ts";
import { createHash } from "node:crypto";
import { type AuditEvent, auditEvent, type AuditRecord, ZERO_HASH } from "./records.ts";
import type { Hash } from "node:crypto";
import { checkAtStartup, type HeadMark, writeHeadMark } from "./startup.ts";

/** The file operations the writer uses; a test replaces them to make a write fail on demand. */
export interface AuditFileOps {
  /** Writes every byte at the end of the file, or throws. */
  write(file: Deno.FsFile, bytes: Uint8Array): Promise<void>;
  /** fdatasync. */
  syncData(file: Deno.FsFile): Promise<void>;
}

/**
 * The real file operations. The write is synchronous: it copies a batch of lines into the page
 * cache, a few microseconds, where an async write costs a trip through Deno's blocking pool
 * (measured 15-30 us per append here). The fdatasync, which waits for the disk, stays async so
 * that appends arriving meanwhile queue up for the next batch.
 */
export const realFileOps: AuditFileOps = {
  // deno-lint-ignore require-await
  async write(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
    let written = 0;
    while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
  },
  syncData(file: Deno.FsFile): Promise<void> {
    return file.syncData();
  },
};

/** Options of AuditWriter.open. */
export interface AuditWriterOptions {
  /** `gurt serve --accept-break`: accept the first failure of the whole log. */
  acceptBreak?: boolean;
  /** The time of each record; the real clock by default. */
  clock?: () => Date;
  /** The file operations, for tests that make writes fail. */
  fileOps?: Partial<AuditFileOps>;
  /**
   * Called once the startup check has passed and the log it read is synced, before the writer
   * writes anything, with the first seq that is not whole on disk: records a crashed writer placed
   * there or later never reached the disk (the first seq the writer will write, or a torn last
   * line's that a break accepts). If it throws, open fails having written nothing.
   */
  beforeWrite?: (lostFrom: number) => Promise<void>;
}

interface Queued {
  event: AuditEvent;
  /** The seq the record was placed at when it was appended. */
  seq: number;
  resolve: (record: AuditRecord) => void;
  reject: (error: Error) => void;
}

const encoder = new TextEncoder();

/** The only writer of a box home's audit log. */
export class AuditWriter {
  readonly #dir: string;
  readonly #lock: Deno.FsFile;
  readonly #clock: () => Date;
  readonly #ops: AuditFileOps;
  #head: string;
  /** The seq of the next record written. */
  #nextSeq: number;
  /** The seq the next record appended is placed at: #nextSeq plus the records queued or in flight. */
  #placedSeq: number;
  #latest: string | null;
  #file: Deno.FsFile | null = null;
  #queue: Queued[] = [];
  #flushing = false;
  readonly #released = Promise.withResolvers<void>();
  #failure: AuditUnavailableError | null = null;
  #closed = false;
  /**
   * Where the latest file ends, in bytes and lines, and the length of its last line, as written:
   * the head mark left at close (startup.ts). Null when it is not known.
   */
  #end: { bytes: number; lines: number; length: number } | null = null;
  /** The running SHA-256 of the latest file's bytes, while #end is known. */
  #prefix: Hash | null = null;

  private constructor(dir: string, lock: Deno.FsFile, options: AuditWriterOptions) {
    this.#dir = dir;
    this.#lock = lock;
    this.#clock = options.clock ?? (() => new Date());
    this.#ops = { ...realFileOps, ...options.fileOps };
    this.#head = ZERO_HASH;
    this.#nextSeq = 0;
    this.#placedSeq = 0;
    this.#latest = null;
  }

  /**
   * Takes the lock, runs the startup check (recovering a torn tail, or with acceptBreak appending
   * the AcceptedBreak record) and returns the writer with the notices to print.
   */
  static async open(
    home: string,
    options: AuditWriterOptions = {},
  ): Promise<{ writer: AuditWriter; notices: string[] }> {
    const dir = auditDir(home);
    await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
    const lockPath = `${dir}/.lock`;
    const lock = await Deno.open(lockPath, { read: true, write: true, create: true, mode: 0o600 });
    if (!(await takeLock(lock))) {
      lock.close();
      throw new AuditLockedError(lockPath);
    }
    const writer = new AuditWriter(dir, lock, options);
    try {
      const notices = await writer.#startup(options.acceptBreak === true, options.beforeWrite);
      return { writer, notices };
    } catch (error) {
      writer.close();
      throw error;
    }
  }

  /** Whether a write or sync has failed: every append now rejects until a new process opens it. */
  get failed(): boolean {
    return this.#failure !== null;
  }

  /**
   * Appends the event as the next record and resolves with it once the fdatasync covering it has
   * returned. Rejects with AuditUnavailableError if it (or any earlier write) failed. `placed` is
   * called at once with the seq the record will have, if the event was taken (valid, writer open).
   */
  append(event: AuditEvent, placed?: (seq: number) => void): Promise<AuditRecord> {
    if (this.#failure !== null) return Promise.reject(this.#failure);
    if (this.#closed) {
      return Promise.reject(new AuditUnavailableError("the audit writer has been closed"));
    }
    if (event.type === "recovery" || event.type === "accepted_break") {
      return Promise.reject(
        new TypeError(`only the startup check writes a ${event.type} record, not append`),
      );
    }
    return this.#enqueue(event, placed);
  }

  #enqueue(event: AuditEvent, placed?: (seq: number) => void): Promise<AuditRecord> {
    // zod's copy, keys in schema order: about 0.6 µs, nothing beside an append's fdatasync.
    const parsed = auditEvent.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return Promise.reject(
        new TypeError(`the audit event is not valid: ${issue.path.join(".")}: ${issue.message}`),
      );
    }
    const seq = this.#placedSeq++;
    const written = new Promise<AuditRecord>((resolve, reject) => {
      this.#queue.push({ event: parsed.data, seq, resolve, reject });
      if (!this.#flushing) void this.#flush();
    });
    placed?.(seq);
    return written;
  }

  /** Releases the lock and the files; appends already queued are still written first. */
  /**
   * Stops the writer; what is being flushed is flushed first. The promise settles once the log's
   * file and lock are let go, so a core started next on the same home finds the lock free.
   */
  close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      if (!this.#flushing) this.#release();
    }
    return this.#released.promise;
  }

  async #startup(
    acceptBreak: boolean,
    beforeWrite: ((lostFrom: number) => Promise<void>) | undefined,
  ): Promise<string[]> {
    const { report, files, mark, prefix } = await checkAtStartup(this.#dir, acceptBreak);
    this.#latest = files.length === 0 ? null : files[files.length - 1];
    const failure = report.failure;
    if (failure !== null && !acceptBreak) throw new AuditChainBrokenError(this.#dir, failure);
    if (failure === null && acceptBreak) throw new AuditNothingToAcceptError(this.#dir);
    const torn = failure === null ? report.torn_tail : null;
    // Where the chain goes on: after the accepted break, after the torn line, or after the head.
    if (failure !== null) this.#startAt(failure.break_seq, failure.break_prev);
    else if (torn !== null) this.#startAt(torn.recovery_seq, torn.recovery_prev);
    else this.#startAt(report.next_seq, report.head ?? ZERO_HASH);
    // A core killed before its fdatasync returned leaves its last lines in the page cache: read
    // here as if on disk, and lost if the power goes. Synced before anything acts on them.
    if (this.#latest !== null) await this.#syncLatest();
    if (mark !== null && prefix !== null && mark.file === this.#latest) {
      // The next start hashes the file up to here, and verifies only the lines written after it.
      this.#end = { bytes: mark.bytes, lines: mark.lines, length: mark.length };
      this.#prefix = prefix;
      writeHeadMark(this.#dir, mark);
    }
    // A torn last line inside an accepted break keeps its seq: the AcceptedBreak takes the next.
    await beforeWrite?.(failure?.tail_torn === true ? failure.break_seq - 1 : this.#nextSeq);
    if (failure !== null) {
      if (failure.tail_torn && report.last_line !== null) {
        await this.#endLine(report.last_line.file);
      }
      const record = await this.#enqueue({
        type: "accepted_break",
        file: failure.file,
        line: failure.line,
        last_good: failure.last_good,
      });
      return [
        `audit: accepted the break at ${this.#dir}/${failure.file}:${failure.line} ` +
        `(${failure.what}); the chain goes on from the AcceptedBreak record, seq ${record.seq}`,
      ];
    }
    if (torn === null) return [];
    if (!torn.has_newline) await this.#endLine(torn.at.file);
    await this.#enqueue({ type: "recovery", torn_bytes: torn.bytes, torn_sha256: torn.sha256 });
    return [
      `audit: recovered a torn final line at ${this.#dir}/${torn.at.file}:${torn.at.line}; ` +
      "see runbook.md#audit-recovered",
    ];
  }

  /** The chain goes on at `seq`, after the record whose line hashes to `head`. */
  #startAt(seq: number, head: string): void {
    this.#nextSeq = seq;
    this.#placedSeq = seq;
    this.#head = head;
  }

  /** fdatasync of the latest file as it is, and of the folder that lists it. */
  async #syncLatest(): Promise<void> {
    const file = await Deno.open(`${this.#dir}/${this.#latest}`, { read: true });
    try {
      await this.#ops.syncData(file);
    } finally {
      file.close();
    }
    await this.#syncDir();
  }

  /** fdatasync of the audit folder, so a file created in it survives a power cut. */
  async #syncDir(): Promise<void> {
    const dir = await Deno.open(this.#dir, { read: true });
    try {
      await dir.syncData();
    } finally {
      dir.close();
    }
  }

  /** Ends a torn final line with its missing newline, and syncs it. */
  async #endLine(name: string): Promise<void> {
    const file = await Deno.open(`${this.#dir}/${name}`, { append: true });
    try {
      await this.#ops.write(file, encoder.encode("\n"));
      await this.#ops.syncData(file);
    } finally {
      file.close();
    }
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      if (this.#failure !== null) {
        for (const queued of batch) queued.reject(this.#failure);
        continue;
      }
      try {
        const records = await this.#writeBatch(batch);
        batch.forEach((queued, i) => queued.resolve(records[i]));
      } catch (error) {
        const cause = error instanceof Error ? error.message : String(error);
        this.#failure = new AuditUnavailableError(cause);
        for (const queued of batch) queued.reject(this.#failure);
      }
    }
    this.#flushing = false;
    if (this.#closed) this.#release();
  }

  /** Writes the records of a batch, one write and one fdatasync per file touched. */
  async #writeBatch(batch: Queued[]): Promise<AuditRecord[]> {
    const records: AuditRecord[] = [];
    let chunks: Uint8Array[] = [];
    for (const { event, seq } of batch) {
      // Seqs were handed out in the order of the queue, which is the order written.
      if (seq !== this.#nextSeq) {
        throw new Error(`record placed at ${seq} would be ${this.#nextSeq}`);
      }
      const time = this.#clock().toISOString();
      const name = this.#fileFor(time, event);
      if (name !== this.#latest || this.#file === null) {
        await this.#writeAndSync(chunks);
        chunks = [];
        await this.#switchTo(name);
      }
      const record: AuditRecord = { seq: this.#nextSeq, time, prev: this.#head, event };
      const line = encoder.encode(JSON.stringify(record));
      this.#head = sha256Hex(line);
      this.#nextSeq++;
      chunks.push(line, NEWLINE);
      if (this.#end !== null && this.#prefix !== null) {
        this.#end = {
          bytes: this.#end.bytes + line.length + 1,
          lines: this.#end.lines + 1,
          length: line.length,
        };
        this.#prefix.update(line).update(NEWLINE);
      }
      records.push(record);
    }
    await this.#writeAndSync(chunks);
    return records;
  }

  /** The file a record goes in: its UTC date's, but never one older than the latest file. */
  #fileFor(time: string, event: AuditEvent): string {
    const latest = this.#latest;
    if (latest === null) return fileNameFor(time);
    if (event.type === "recovery" || event.type === "accepted_break") return latest;
    const byDate = fileNameFor(time);
    return byDate > latest ? byDate : latest;
  }

  async #writeAndSync(chunks: Uint8Array[]): Promise<void> {
    if (chunks.length === 0 || this.#file === null) return;
    let length = 0;
    for (const chunk of chunks) length += chunk.length;
    const bytes = new Uint8Array(length);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    await this.#ops.write(this.#file, bytes);
    await this.#ops.syncData(this.#file);
  }

  /** Makes `name` the file being written: the latest one, or a new one (0600, directory synced). */
  async #switchTo(name: string): Promise<void> {
    this.#file?.close();
    this.#file = null;
    const path = `${this.#dir}/${name}`;
    if (name === this.#latest) {
      this.#file = await Deno.open(path, { append: true });
      return;
    }
    try {
      this.#file = await Deno.open(path, { createNew: true, append: true, mode: 0o600 });
      this.#end = { bytes: 0, lines: 0, length: 0 };
      this.#prefix = createHash("sha256");
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      this.#file = await Deno.open(path, { append: true });
      this.#end = null; // what is in it already is not known
      this.#prefix = null;
    }
    this.#latest = name;
    await this.#syncDir();
  }

  #release(): void {
    this.#file?.close();
    this.#file = null;
    // Written before the lock is let go, so a core started next reads it whole; without it, that
    // start reads the whole newest file.
    const mark = this.#markAtEnd();
    try {
      if (mark !== null) writeHeadMark(this.#dir, mark);
    } catch {
      // a full disk, say: the next start reads more
    }
    this.#lock.close();
    this.#released.resolve();
  }

  /** The head mark of the log as this writer leaves it; null after a failure, or if unknown. */
  #markAtEnd(): HeadMark | null {
    const end = this.#end;
    const prefix = this.#prefix;
    if (
      this.#failure !== null || end === null || prefix === null || this.#latest === null ||
      end.lines === 0
    ) {
      return null;
    }
    return {
      file: this.#latest,
      bytes: end.bytes,
      lines: end.lines,
      seq: this.#nextSeq - 1,
      sha256: this.#head,
      length: end.length,
      prefix_sha256: prefix.copy().digest("hex"),
    };
  }
}

const NEWLINE = encoder.encode("\n");

/**
 * How long a start waits for a lock just let go. A process forked by this one (any child: a
 * sandbox probe, a worker) holds a copy of every descriptor until it runs its program, which
 * closes them (close-on-exec); on a loaded machine that can take milliseconds, during which a lock
 * released by a core that just closed is still held through the copy. A second `gurt serve` holds
 * the lock for its life, so waiting this long still finds it.
 */
const LOCK_WAIT_MS = 2000;

/** Takes the audit lock, trying again for LOCK_WAIT_MS; false when another holds it still. */
async function takeLock(lock: Deno.FsFile): Promise<boolean> {
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    if (await lock.tryLock(true)) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * A live index of a box home's audit log, kept by the core for the owner's pages. It reads the log
 * once, judging the whole chain as `gurt audit verify` does, and after that only what was appended
 * since. It keeps where every `every`-th record starts and where each task's records are, so one
 * page of records, or one task's records, is read without reading the log.
 *
 * What it knows is kept on disk beside the log (index_store.ts: audit/.index), with the chain
 * machine's state before the last line read: a core that starts again goes on from there, reading
 * only what was appended since, once the newest file's bytes up to there still hash as they did
 * (read in pieces) and its last line is the one it read. Its memory does not grow with the log.
 *
 * An older file whose size or time changed, a file gone or put before the newest, a newest file
 * that shrank or whose bytes changed is read again from the start, with the whole log. Within one
 * core's life the bytes of the newest file read before are not read again: `gurt audit verify`
 * reads every byte. A last line without its newline is a write in progress, read once it is whole.
 */
import { createHash, type Hash } from "node:crypto";
import { ChainMachine, type MachineState } from "./chain_machine.ts";
import { DiskStore, type Entry, type IndexStore, MemoryStore } from "./index_store.ts";
import { auditDir, listAuditFiles, readRange } from "./files.ts";
import { sha256Hex } from "./hash.ts";
import { type AuditRecord, parseRecordLine } from "./records.ts";
import type { HomeReport } from "./verify_home.ts";

/** Reads up to `length` bytes of a file from `offset`; fewer at its end. */
export type ReadAt = (path: string, offset: number, length: number) => Promise<Uint8Array>;

/** Options of an AuditLogIndex. */
export interface LogIndexOptions {
  /** Every how many records the index keeps where one starts; 64. */
  every?: number;
  /** How many of each task's newest records it keeps the places of; 500. */
  perTask?: number;
  /** How the log's bytes are read (a test counts them). */
  readAt?: ReadAt;
}

/** One page of records and where the log ends. */
export interface RecordPage {
  records: AuditRecord[];
  /** The seq after the newest record read. */
  nextSeq: number;
}

interface KnownFile {
  name: string;
  /** Bytes read and fed, from the start: whole lines only, unless the file is done. */
  fed: number;
  /** A file before the newest: read to its end, with its size and time then. */
  done: boolean;
  size: number;
  mtime: number | null;
}

/** Where a line starts: a file of #files and a byte offset in it, with its length. */
interface Place {
  file: number;
  offset: number;
  length: number;
}

/** What the index saves after each refresh, to go on from at the next core's start. */
interface SavedState {
  version: 1;
  files: KnownFile[];
  /** The records, next seq and marks counted before the last line read. */
  records: number;
  nextSeq: number;
  marks: number;
  machine: MachineState;
  /** The last line read, its hash, and the SHA-256 of its file's bytes up to `fed`. */
  last: Place & { sha256: string; fed: number; prefix: string };
}

const FEED_BYTES = 256 * 1024;
const PAGE_BYTES = 64 * 1024;

/** The index of one home's log. */
export class AuditLogIndex {
  readonly #dir: string;
  readonly #every: number;
  readonly #perTask: number;
  readonly #readAt: ReadAt;
  #machine = new ChainMachine();
  #files: KnownFile[] = [];
  /** Where the entries are kept; opened at the first refresh. */
  #store: IndexStore | null = null;
  /** Marks and task entries of lines read, not yet handed to the store. */
  #newMarks: Entry[] = [];
  #newTasks = new Map<string, Entry[]>();
  #records = 0;
  #nextSeq = 0;
  /** The last line read, and the counts before it: what a saved state goes on from. */
  #last: (Place & { sha256: string; records: number; nextSeq: number; marks: number }) | null =
    null;
  /** Lines were read since the state was last saved. */
  #unsaved = false;
  /** The running SHA-256 of the bytes of file `file` read so far. */
  #prefix: { file: number; hash: Hash } | null = null;
  /** The last report had a torn line the machine has let go: the next refresh starts over. */
  #stale = false;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(home: string, options: LogIndexOptions = {}) {
    this.#dir = auditDir(home);
    this.#every = Math.max(1, options.every ?? 64);
    this.#perTask = Math.max(1, options.perTask ?? 500);
    this.#readAt = options.readAt ?? readRange;
  }

  /** Reads what was appended since the last refresh (the whole log the first time). */
  refresh(): Promise<void> {
    return this.#exclusive(() => this.#refresh());
  }

  /** The verification of the whole log as it is now, as `gurt audit verify` reports it. */
  summary(): Promise<HomeReport> {
    return this.#exclusive(async () => {
      await this.#refresh();
      const report = this.#machine.finish();
      if (report.torn_tail !== null) this.#stale = true;
      return {
        ...report,
        recoveries: [...report.recoveries],
        accepted_breaks: [...report.accepted_breaks],
        clock_warnings: [...report.clock_warnings],
        dir: this.#dir,
        checkpoint: null,
      };
    });
  }

  /** Up to `limit` records from seq `from` on, in the log's order; the newest without `from`. */
  records(options: { from?: number; limit: number }): Promise<RecordPage> {
    return this.#exclusive(async () => {
      await this.#refresh();
      const from = options.from ?? Math.max(0, this.#nextSeq - options.limit);
      const start = await this.#markBefore(from);
      const records: AuditRecord[] = [];
      await this.#scan(start, (record) => {
        if (record.seq >= from) records.push(record);
        return records.length < options.limit;
      });
      return { records, nextSeq: this.#nextSeq };
    });
  }

  /** The newest records (up to `perTask`) whose event names task `id`, oldest first. */
  taskRecords(id: string): Promise<AuditRecord[]> {
    return this.#exclusive(async () => {
      await this.#refresh();
      // A line read again after a crash (past the state saved) was entered twice: newest first,
      // each seq once.
      const entries = await this.#store!.taskTail(id, 2 * this.#perTask);
      const newest: Entry[] = [];
      for (let i = entries.length - 1; i >= 0 && newest.length < this.#perTask; i--) {
        const entry = entries[i];
        if (entry.seq >= this.#nextSeq || entry.file >= this.#files.length) continue;
        if (newest.length === 0 || entry.seq < newest[newest.length - 1].seq) newest.push(entry);
      }
      const out: AuditRecord[] = [];
      for (const place of newest.reverse()) {
        const bytes = await this.#readAt(this.#path(place.file), place.offset, place.length);
        const record = parseRecordLine(bytes).record;
        if (record !== null && record.seq === place.seq && taskOf(record) === id) out.push(record);
      }
      return out;
    });
  }

  /** Stops reading (a first read of a long log stops at its next piece); nothing reads after. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#queue.catch(() => {});
    this.#store?.close();
  }

  #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const guarded = () => {
      if (this.#closed) throw new Error("the audit log index is closed");
      return work();
    };
    const run = this.#queue.then(guarded, guarded);
    this.#queue = run.catch(() => {});
    return run;
  }

  async #refresh(): Promise<void> {
    const names = await listAuditFiles(this.#dir);
    if (this.#store === null) {
      this.#store = await DiskStore.open(`${this.#dir}/.index`) ?? new MemoryStore(this.#perTask);
      if (!(await this.#resume(names))) await this.#reset();
    }
    if (this.#stale || !(await this.#stillHolds(names))) await this.#reset();
    for (let i = 0; i < names.length; i++) {
      if (i === this.#files.length) {
        this.#files.push({ name: names[i], fed: 0, done: false, size: 0, mtime: null });
      }
      const file = this.#files[i];
      if (file.done) continue;
      const last = i === names.length - 1;
      await this.#feedFile(i, last);
      if (!last) {
        const info = await Deno.stat(this.#path(i));
        file.done = true;
        file.size = info.size;
        file.mtime = info.mtime?.getTime() ?? null;
      }
    }
    await this.#flushEntries();
    await this.#save();
  }

  /** Hands the marks and task entries of the lines read to the store. */
  async #flushEntries(): Promise<void> {
    const store = this.#store!;
    await store.appendMarks(this.#newMarks);
    this.#newMarks = [];
    for (const [task, entries] of this.#newTasks) await store.appendTask(task, entries);
    this.#newTasks = new Map();
  }

  /** Saves the state to go on from: the machine's before the last line, and that line's place. */
  async #save(): Promise<void> {
    const last = this.#last;
    const machine = this.#machine.stateBeforeLast();
    const prefix = this.#prefix;
    if (!this.#unsaved) return;
    if (last === null || machine === null || prefix === null || prefix.file !== last.file) return;
    this.#unsaved = false;
    const state: SavedState = {
      version: 1,
      files: this.#files.map((file) => ({ ...file })),
      records: last.records,
      nextSeq: last.nextSeq,
      marks: last.marks,
      machine,
      last: {
        file: last.file,
        offset: last.offset,
        length: last.length,
        sha256: last.sha256,
        fed: this.#files[last.file].fed,
        prefix: prefix.hash.copy().digest("hex"),
      },
    };
    await this.#store!.saveState(state);
  }

  /**
   * Goes on from the state saved by the last core, when the log still holds what it read: the
   * same older files, the last line's file's bytes hashing as they did. False to read it all.
   */
  async #resume(names: string[]): Promise<boolean> {
    const state = await this.#store!.loadState() as SavedState | null;
    if (state === null || state.version !== 1 || !Array.isArray(state.files)) return false;
    const last = state.last;
    if (last === undefined || last.file >= state.files.length) return false;
    this.#files = state.files.map((file) => ({ ...file }));
    try {
      if (!(await this.#stillHolds(names))) return false;
      const line = await this.#readAt(this.#path(last.file), last.offset, last.length);
      if (line.length !== last.length || sha256Hex(line) !== last.sha256) return false;
      const before = await this.#hashFile(last.file, last.offset);
      const whole = before === null ? null : await this.#hashFile(last.file, last.fed, {
        from: last.offset,
        hash: before.copy(),
      });
      if (whole === null || whole.digest("hex") !== last.prefix) return false;
      this.#machine = ChainMachine.restore(state.machine);
      await this.#store!.keepMarks(state.marks);
      this.#records = state.records;
      this.#nextSeq = state.nextSeq;
      this.#prefix = { file: last.file, hash: before! };
      // The last line is fed again, and what comes after it: its file from that line on.
      this.#files.length = last.file + 1;
      this.#files[last.file] = { ...this.#files[last.file], fed: last.offset, done: false };
      return true;
    } catch {
      return false;
    }
  }

  /** The SHA-256 of file `index`'s bytes up to `end` (from `from`, going on with `hash`). */
  async #hashFile(
    index: number,
    end: number,
    options: { from: number; hash: Hash } = { from: 0, hash: createHash("sha256") },
  ): Promise<Hash | null> {
    for (let at = options.from; at < end;) {
      const read = await this.#readAt(this.#path(index), at, Math.min(1024 * 1024, end - at));
      if (read.length === 0) return null;
      options.hash.update(read);
      at += read.length;
    }
    return options.hash;
  }

  /** Whether what was read before is still the log's: the same files, unchanged but the newest. */
  async #stillHolds(names: string[]): Promise<boolean> {
    if (this.#files.length > names.length) return false;
    for (let i = 0; i < this.#files.length; i++) {
      const file = this.#files[i];
      if (file.name !== names[i]) return false;
      let info: Deno.FileInfo;
      try {
        info = await Deno.stat(this.#path(i));
      } catch {
        return false;
      }
      if (!file.done) return info.size >= file.fed;
      if (info.size !== file.size || (info.mtime?.getTime() ?? null) !== file.mtime) return false;
    }
    return true;
  }

  async #reset(): Promise<void> {
    this.#machine = new ChainMachine();
    this.#files = [];
    this.#newMarks = [];
    this.#newTasks = new Map();
    this.#last = null;
    this.#prefix = null;
    this.#records = 0;
    this.#nextSeq = 0;
    this.#stale = false;
    await this.#store!.clear();
  }

  /** Feeds the file's lines from where it was left; a file before the newest to its very end. */
  async #feedFile(index: number, last: boolean): Promise<void> {
    const file = this.#files[index];
    // A file fed before goes on where it was: the machine still counts its lines.
    if (file.fed === 0) this.#machine.file(file.name);
    if (this.#prefix?.file !== index) this.#prefix = { file: index, hash: createHash("sha256") };
    const hash = this.#prefix.hash;
    let carry = new Uint8Array(0);
    let carryAt = file.fed;
    let at = file.fed;
    while (!this.#closed) {
      const read = await this.#readAt(this.#path(index), at, FEED_BYTES);
      if (read.length === 0) break;
      at += read.length;
      const bytes = carry.length === 0 ? read : concat(carry, read);
      let start = 0;
      for (let end = bytes.indexOf(10); end !== -1; end = bytes.indexOf(10, start)) {
        this.#line(bytes.subarray(start, end), { file: index, offset: carryAt + start }, true);
        start = end + 1;
      }
      hash.update(bytes.subarray(0, start));
      carry = bytes.slice(start);
      carryAt += start;
      file.fed = carryAt;
      // Entries go to the store a piece at a time, so a first reading holds few at once.
      await this.#flushEntries();
    }
    if (!last && carry.length > 0) {
      this.#line(carry, { file: index, offset: carryAt }, false);
      hash.update(carry);
      carryAt += carry.length;
    }
    file.fed = carryAt;
  }

  #line(bytes: Uint8Array, at: { file: number; offset: number }, hasNewline: boolean): void {
    const { record, error } = parseRecordLine(bytes);
    const sha256 = sha256Hex(bytes);
    this.#unsaved = true;
    this.#machine.line({ bytes: bytes.length, hasNewline, hash: sha256, record, error });
    this.#last = {
      file: at.file,
      offset: at.offset,
      length: bytes.length,
      sha256,
      records: this.#records,
      nextSeq: this.#nextSeq,
      marks: this.#store!.markCount() + this.#newMarks.length,
    };
    if (record === null) return;
    const entry = { seq: record.seq, file: at.file, offset: at.offset, length: bytes.length };
    if (this.#records % this.#every === 0) this.#newMarks.push(entry);
    this.#records++;
    this.#nextSeq = record.seq + 1;
    const task = taskOf(record);
    if (task === null) return;
    let entries = this.#newTasks.get(task);
    if (entries === undefined) this.#newTasks.set(task, entries = []);
    entries.push(entry);
  }

  /** The latest mark at or before seq `from`; the log's start if there is none. */
  async #markBefore(from: number): Promise<{ file: number; offset: number }> {
    const store = this.#store!;
    let low = 0;
    let high = store.markCount() - 1;
    let found: Place | null = null;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const mark = await store.mark(middle);
      if (mark.seq <= from) {
        found = mark;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    return found ?? { file: 0, offset: 0 };
  }

  /** Reads records from `start` up to what was fed, while `take` says to go on. */
  async #scan(
    start: { file: number; offset: number },
    take: (record: AuditRecord) => boolean,
  ): Promise<void> {
    for (let index = start.file; index < this.#files.length; index++) {
      const end = this.#files[index].fed;
      let at = index === start.file ? start.offset : 0;
      let carry = new Uint8Array(0);
      while (at < end) {
        const read = await this.#readAt(this.#path(index), at, Math.min(PAGE_BYTES, end - at));
        if (read.length === 0) break;
        at += read.length;
        const bytes = carry.length === 0 ? read : concat(carry, read);
        let from = 0;
        for (let newline = bytes.indexOf(10); newline !== -1; newline = bytes.indexOf(10, from)) {
          const record = parseRecordLine(bytes.subarray(from, newline)).record;
          from = newline + 1;
          if (record !== null && !take(record)) return;
        }
        carry = bytes.slice(from);
      }
      if (carry.length > 0) {
        const record = parseRecordLine(carry).record;
        if (record !== null && !take(record)) return;
      }
    }
  }

  #path(index: number): string {
    return `${this.#dir}/${this.#files[index].name}`;
  }
}

/** The task a record's event names (`task`), or null. */
function taskOf(record: AuditRecord): string | null {
  const task = (record.event as { task?: unknown }).task;
  return typeof task === "string" ? task : null;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * Where the audit log index (log_index.ts) keeps what it knows: on disk beside the log, in
 * audit/.index/, so that a core's start reads only what was appended since the last one, and its
 * memory does not grow with the log. Three kinds of file, none synced (a lost or torn index is
 * read again from the log, which is the truth):
 *
 * - `marks.bin`: where every `every`-th record starts, 24 bytes each (seq, file, offset, length),
 *   in the log's order, searched by halves;
 * - `tasks/<hash of the task>.bin`: where each of a task's records starts, in the same form;
 * - `state.json`: the files read and how far, the chain machine's state before the last line, and
 *   how many marks are good, written through a rename once the entries it counts are written.
 *
 * The index holds `.index/lock` while it uses the folder; a second index of the same home (a test,
 * a bench) that cannot take it keeps its entries in memory instead, as MemoryStore does.
 */
import { createHash } from "node:crypto";
import { readRange } from "./files.ts";

/** Where a record's line starts: its seq, a file (an index in the index's files), its bytes. */
export interface Entry {
  seq: number;
  file: number;
  offset: number;
  length: number;
}

/** Where the index's entries and state are kept. */
export interface IndexStore {
  /** The state saved last, or null. */
  loadState(): Promise<unknown | null>;
  /** Saves the state; the entries appended so far are what it counts. */
  saveState(state: unknown): Promise<void>;
  /** Forgets everything: the log is read again from its start. */
  clear(): Promise<void>;
  /** Keeps the first `count` marks only (those a loaded state counts). */
  keepMarks(count: number): Promise<void>;
  appendMarks(entries: Entry[]): Promise<void>;
  markCount(): number;
  mark(index: number): Promise<Entry>;
  appendTask(task: string, entries: Entry[]): Promise<void>;
  /** Up to `count` of a task's newest entries, oldest first. */
  taskTail(task: string, count: number): Promise<Entry[]>;
  close(): void;
}

const ENTRY = 24;

function encode(entries: Entry[]): Uint8Array {
  const bytes = new Uint8Array(entries.length * ENTRY);
  const view = new DataView(bytes.buffer);
  entries.forEach((entry, i) => {
    view.setFloat64(i * ENTRY, entry.seq, true);
    view.setUint32(i * ENTRY + 8, entry.file, true);
    view.setFloat64(i * ENTRY + 12, entry.offset, true);
    view.setUint32(i * ENTRY + 20, entry.length, true);
  });
  return bytes;
}

function decode(bytes: Uint8Array): Entry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Entry[] = [];
  for (let at = 0; at + ENTRY <= bytes.length; at += ENTRY) {
    out.push({
      seq: view.getFloat64(at, true),
      file: view.getUint32(at + 8, true),
      offset: view.getFloat64(at + 12, true),
      length: view.getUint32(at + 20, true),
    });
  }
  return out;
}

/** The index's entries on disk, in `dir` (audit/.index). */
export class DiskStore implements IndexStore {
  readonly #dir: string;
  readonly #lock: Deno.FsFile;
  #marks = 0;

  private constructor(dir: string, lock: Deno.FsFile) {
    this.#dir = dir;
    this.#lock = lock;
  }

  /** The store in `dir`, or null when another index holds it or it cannot be made. */
  static async open(dir: string): Promise<DiskStore | null> {
    try {
      await Deno.mkdir(`${dir}/tasks`, { recursive: true, mode: 0o700 });
      const lock = await Deno.open(`${dir}/lock`, {
        read: true,
        write: true,
        create: true,
        mode: 0o600,
      });
      if (!(await lock.tryLock(true))) {
        lock.close();
        return null;
      }
      const store = new DiskStore(dir, lock);
      store.#marks = Math.floor(await sizeOf(`${dir}/marks.bin`) / ENTRY);
      return store;
    } catch {
      return null;
    }
  }

  async loadState(): Promise<unknown | null> {
    try {
      return JSON.parse(await Deno.readTextFile(`${this.#dir}/state.json`));
    } catch {
      return null;
    }
  }

  async saveState(state: unknown): Promise<void> {
    const temporary = `${this.#dir}/state.json.new`;
    await Deno.writeTextFile(temporary, JSON.stringify(state), { mode: 0o600 });
    await Deno.rename(temporary, `${this.#dir}/state.json`);
  }

  async clear(): Promise<void> {
    await Deno.remove(`${this.#dir}/state.json`).catch(() => {});
    await Deno.remove(`${this.#dir}/marks.bin`).catch(() => {});
    await Deno.remove(`${this.#dir}/tasks`, { recursive: true }).catch(() => {});
    await Deno.mkdir(`${this.#dir}/tasks`, { recursive: true, mode: 0o700 });
    this.#marks = 0;
  }

  async keepMarks(count: number): Promise<void> {
    if (count >= this.#marks) return;
    await Deno.truncate(`${this.#dir}/marks.bin`, count * ENTRY);
    this.#marks = count;
  }

  async appendMarks(entries: Entry[]): Promise<void> {
    if (entries.length === 0) return;
    await appendEntries(`${this.#dir}/marks.bin`, entries);
    this.#marks += entries.length;
  }

  markCount(): number {
    return this.#marks;
  }

  async mark(index: number): Promise<Entry> {
    const bytes = await readRange(`${this.#dir}/marks.bin`, index * ENTRY, ENTRY);
    const [entry] = decode(bytes);
    if (entry === undefined) throw new Error(`the audit index lacks mark ${index}`);
    return entry;
  }

  async appendTask(task: string, entries: Entry[]): Promise<void> {
    await appendEntries(this.#taskPath(task), entries);
  }

  async taskTail(task: string, count: number): Promise<Entry[]> {
    const path = this.#taskPath(task);
    const size = await sizeOf(path);
    const whole = size - (size % ENTRY);
    const start = Math.max(0, whole - count * ENTRY);
    return decode(await readRange(path, start, whole - start));
  }

  close(): void {
    this.#lock.close();
  }

  #taskPath(task: string): string {
    const name = createHash("sha256").update(task).digest("hex").slice(0, 32);
    return `${this.#dir}/tasks/${name}.bin`;
  }
}

/** The index's entries in memory: for an index that cannot have the folder to itself. */
export class MemoryStore implements IndexStore {
  #marks: Entry[] = [];
  #tasks = new Map<string, Entry[]>();
  #state: unknown | null = null;
  readonly #perTask: number;

  constructor(perTask: number) {
    this.#perTask = perTask;
  }

  loadState(): Promise<unknown | null> {
    return Promise.resolve(this.#state);
  }

  saveState(state: unknown): Promise<void> {
    this.#state = state;
    return Promise.resolve();
  }

  clear(): Promise<void> {
    this.#marks = [];
    this.#tasks = new Map();
    this.#state = null;
    return Promise.resolve();
  }

  keepMarks(count: number): Promise<void> {
    this.#marks.length = Math.min(this.#marks.length, count);
    return Promise.resolve();
  }

  appendMarks(entries: Entry[]): Promise<void> {
    this.#marks.push(...entries);
    return Promise.resolve();
  }

  markCount(): number {
    return this.#marks.length;
  }

  mark(index: number): Promise<Entry> {
    return Promise.resolve(this.#marks[index]);
  }

  appendTask(task: string, entries: Entry[]): Promise<void> {
    let places = this.#tasks.get(task);
    if (places === undefined) this.#tasks.set(task, places = []);
    places.push(...entries);
    if (places.length >= 2 * this.#perTask) places.splice(0, places.length - this.#perTask);
    return Promise.resolve();
  }

  taskTail(task: string, count: number): Promise<Entry[]> {
    return Promise.resolve((this.#tasks.get(task) ?? []).slice(-count));
  }

  close(): void {}
}

/** Appends whole entries, first cutting a torn one a crash left at the file's end. */
async function appendEntries(path: string, entries: Entry[]): Promise<void> {
  const file = await Deno.open(path, { write: true, create: true, mode: 0o600 });
  try {
    const size = (await file.stat()).size;
    const whole = size - (size % ENTRY);
    if (whole !== size) await file.truncate(whole);
    await file.seek(whole, Deno.SeekMode.Start);
    const bytes = encode(entries);
    let written = 0;
    while (written < bytes.length) written += await file.write(bytes.subarray(written));
  } finally {
    file.close();
  }
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await Deno.stat(path)).size;
  } catch {
    return 0;
  }
}

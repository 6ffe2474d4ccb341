/**
 * The file under a task's journal: lines of text appended in order and synced, by group commit.
 * Lines that arrive while a write and its sync are under way go out together in the next one, each
 * in the order it came. A line may also be written at once and synced later (`writeNow`): a call's
 * tool.call line is in the file before its tool runs, and synced while the tool runs or with the
 * line that follows it. Only the Journal (journal.ts) uses this; it knows nothing of what a line
 * says.
 *
 * A write cut short (a full disk: ENOSPC after part of the lines went in) leaves a fragment at the
 * end of the file, as the audit writer's torn tail: it is cut off at once, back to where the write
 * began, so the next line starts a line of its own; where the cut itself fails, the next write
 * first ends the fragment with a newline. Either way no line written after it is glued to it, and
 * no line acknowledged before it is touched.
 */
import { writeLine } from "../common/mod.ts";

/** A line `writeNow` took: `waiting` while no sync that covers it has started. */
export interface UnsyncedLine {
  synced: Promise<void>;
  waiting(): boolean;
}

/** A line waiting for a write or a sync. */
interface Waiting {
  text: string;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * One journal file. It is opened at the first write and kept open until `close` (an open costs as
 * much as the write it precedes); after `close`, each write opens and closes it.
 */
export class LineWriter {
  #queue: Waiting[] = [];
  /** Lines writeNow wrote that no sync has covered yet, in file order. */
  #unsynced: Waiting[] = [];
  #flushing = false;
  #file: Deno.FsFile | null = null;
  #closed = false;
  #flushed = Promise.withResolvers<void>();
  /**
   * The file ends in a torn line (a crash cut a write short): the next write first ends it with a
   * newline, or the line written would be glued to it, fail to parse and be lost.
   */
  #torn: boolean;

  constructor(readonly path: string, options: { torn: boolean }) {
    this.#torn = options.torn;
  }

  /** Appends a line and resolves once it is written and synced. */
  append(text: string): Promise<void> {
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    this.#queue.push({ text, resolve, reject });
    if (!this.#flushing) this.#flush();
    return promise;
  }

  /**
   * Writes a line to the file at once (readers of the file see it), to be synced by the next
   * append's sync or the one `sync` starts; `synced` resolves then, and rejects at once if the
   * line cannot be written. While earlier lines wait for their write, the line is appended as
   * `append` does (so the order of lines is the order of the calls), and `waiting` is false.
   */
  writeNow(text: string): UnsyncedLine {
    if (this.#flushing || this.#queue.length > 0 || this.#closed) {
      return { synced: this.append(text), waiting: () => false };
    }
    try {
      this.#writeKept(text);
    } catch (error) {
      this.#release(); // the next append opens the file afresh
      return { synced: Promise.reject(error), waiting: () => false };
    }
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const line = { text, resolve, reject };
    this.#unsynced.push(line);
    return { synced: promise, waiting: () => this.#unsynced.includes(line) };
  }

  /** Starts a sync of the lines writeNow wrote, unless one is already under way. */
  sync(): void {
    if (this.#unsynced.length > 0 && !this.#flushing) this.#flush();
  }

  /** Resolves when the next write has been synced (for followers of the journal). */
  flushed(): Promise<void> {
    return this.#flushed.promise;
  }

  /**
   * Closes the kept file once no write is under way and the lines not yet synced are; later
   * appends open it for each write.
   */
  close(): void {
    this.#closed = true;
    if (this.#flushing) return;
    if (this.#unsynced.length > 0) this.#flush();
    else this.#release();
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    while (this.#queue.length > 0 || this.#unsynced.length > 0) {
      // Lines already in the file come before those written now; one sync covers them all.
      const fresh = this.#queue.splice(0);
      const batch = [...this.#unsynced.splice(0), ...fresh];
      try {
        await this.#write(fresh.length === 0 ? null : fresh.map((line) => line.text).join("\n"));
      } catch (error) {
        for (const line of batch) line.reject(error);
        continue;
      }
      for (const line of batch) line.resolve();
      this.#flushed.resolve();
      this.#flushed = Promise.withResolvers<void>();
    }
    this.#flushing = false;
    if (this.#closed) this.#release();
  }

  /** Lines to write, after a newline that ends a torn last line if the file has one. */
  #afterTear(lines: string): string {
    return this.#torn ? `\n${lines}` : lines;
  }

  /** The kept file, opened for appending if it is not open. */
  #kept(): Deno.FsFile {
    return this.#file ??= Deno.openSync(this.path, { append: true, create: true, mode: 0o600 });
  }

  /** Writes lines and a newline to the kept file, unsynced. */
  #writeKept(lines: string): void {
    this.#writeWhole(this.#kept(), lines);
  }

  /**
   * Writes lines and a newline at the end of `file`; a write cut short is cut off again (or, where
   * that fails too, marked torn), and the error thrown.
   */
  #writeWhole(file: Deno.FsFile, lines: string): void {
    const end = file.statSync().size;
    try {
      writeLine(file, this.#afterTear(lines));
    } catch (error) {
      try {
        file.truncateSync(end);
      } catch {
        this.#torn = true; // the fragment stays: the next write ends it first
        throw error;
      }
      throw error;
    }
    this.#torn = false;
  }

  /** Appends the lines (if any) and a newline to the file, and syncs it. */
  async #write(lines: string | null): Promise<void> {
    if (this.#closed && this.#file === null) {
      if (lines === null) return;
      const file = Deno.openSync(this.path, { append: true, create: true, mode: 0o600 });
      try {
        this.#writeWhole(file, lines);
        await file.syncData();
      } finally {
        file.close();
      }
      return;
    }
    try {
      if (lines !== null) this.#writeKept(lines);
      await this.#kept().syncData();
    } catch (error) {
      this.#release(); // the next append opens the file afresh, as it would after a close
      throw error;
    }
  }

  #release(): void {
    this.#file?.close();
    this.#file = null;
  }
}

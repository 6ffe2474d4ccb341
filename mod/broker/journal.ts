/**
 * A task's action log, tasks/<id>/journal.jsonl: steps, tool calls and results, asks and costs, one
 * JSON line each, synced before the broker answers. Content is redacted before it is written. The
 * journal is also what makes a key's answer the same after a restart.
 *
 * The tool.result line of a call that ran names its Result record's seq (`result`), because the
 * two are synced together: where the line is on disk and the record is not (a crash between the
 * two syncs, or a failed audit write), a tool.unrecorded line voids the answer, and the call is
 * decided afresh as if the line had never been written.
 */
import { redactValue } from "../common/mod.ts";
import {
  apply,
  type CallAnswer,
  type JournalLine,
  journalLine,
  type JournalState,
  type KeyUse,
  readState,
} from "./journal_lines.ts";
import { LineWriter, type UnsyncedLine } from "./journal_writer.ts";

export type { CallAnswer, JournalLine, JournalState, KeyUse, UnsyncedLine };

/**
 * A line checked, redacted and serialised by `Journal.prepare`, for that journal to append later:
 * the work of an append that needs no file, done while something else is waited for.
 */
export class PreparedLine {
  private constructor(
    readonly journal: Journal,
    readonly entry: JournalLine,
    readonly text: string,
  ) {}

  /** Used by Journal.prepare only. */
  static make(journal: Journal, entry: JournalLine, text: string): PreparedLine {
    return new PreparedLine(journal, entry, text);
  }
}

/**
 * One task's journal. Appends never interleave: lines that arrive while a write and its sync are
 * under way go out together in the next one (group commit), each in the order it was appended.
 */
export class Journal {
  readonly state: JournalState;
  readonly #redact: ((text: string) => string) | undefined;
  readonly #writer: LineWriter;

  private constructor(
    readonly path: string,
    state: JournalState,
    options: { redact: ((text: string) => string) | undefined; torn: boolean },
  ) {
    this.state = state;
    this.#redact = options.redact;
    this.#writer = new LineWriter(path, { torn: options.torn });
  }

  /**
   * Opens the journal at `path`, reading what it already holds. With `redact`, every string of
   * every line appended (and of the state it updates) goes through it first: the vault's backstop.
   */
  static async open(
    path: string,
    options: { redact?: (text: string) => string } = {},
  ): Promise<Journal> {
    let text = "";
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    const torn = text !== "" && !text.endsWith("\n");
    return new Journal(path, readState(text), { redact: options.redact, torn });
  }

  /** Checks, redacts and serialises a line for a later append; throws if it is not a line. */
  prepare(entry: JournalLine): PreparedLine {
    const redact = this.#redact;
    const shown = redact === undefined ? entry : redactValue(entry, redact) as JournalLine;
    return PreparedLine.make(this, shown, JSON.stringify(journalLine.parse(shown)));
  }

  /** The line as prepared: by this journal before, or now; throws if it is not a line. */
  #prepared(entry: JournalLine | PreparedLine): PreparedLine {
    if (!(entry instanceof PreparedLine)) return this.prepare(entry);
    if (entry.journal !== this) {
      throw new TypeError("a line prepared by another journal cannot be appended to this one");
    }
    return entry;
  }

  /**
   * Appends a line (or one this journal prepared) and syncs it; the state reflects it once the
   * promise resolves. A `held` line (one this journal prepared) is written and synced, but the
   * state reflects it only once `commit` is called with it: a tool.result line synced beside its
   * Result record answers its key only when both are on disk.
   */
  append(entry: JournalLine | PreparedLine, options: { held?: boolean } = {}): Promise<void> {
    let prepared: PreparedLine;
    try {
      prepared = this.#prepared(entry);
    } catch (error) {
      return Promise.reject(error);
    }
    const written = this.#writer.append(prepared.text);
    if (options.held === true) return written;
    return written.then(() => apply(this.state, prepared.entry));
  }

  /** Makes the state reflect a line appended `held`, once it (and what it waited on) is synced. */
  commit(line: PreparedLine): void {
    if (line.journal !== this) throw new TypeError("a line of another journal");
    apply(this.state, line.entry);
  }

  /**
   * Writes a line (or one this journal prepared) to the file at once (readers of the file see
   * it), to be synced by the next append's sync or the one `syncUnsynced` starts; `synced`
   * resolves then, and rejects at once if the line cannot be written. While earlier lines wait for
   * their write, the line is appended as `append` does (so the order of lines is the order of the
   * calls), and `waiting` is false.
   */
  appendUnsynced(entry: JournalLine | PreparedLine): UnsyncedLine {
    let prepared: PreparedLine;
    try {
      prepared = this.#prepared(entry);
    } catch (error) {
      return { synced: Promise.reject(error), waiting: () => false };
    }
    const written = this.#writer.writeNow(prepared.text);
    const synced = written.synced.then(() => apply(this.state, prepared.entry));
    return { synced, waiting: written.waiting };
  }

  /** Starts a sync of the lines appendUnsynced wrote, unless one is already under way. */
  syncUnsynced(): void {
    this.#writer.sync();
  }

  /**
   * Closes the kept file once no write is under way and the lines not yet synced are; later appends
   * open it for each write.
   */
  close(): void {
    this.#writer.close();
  }

  /** Resolves when the next line has been appended (for followers of the journal). */
  appended(): Promise<void> {
    return this.#writer.flushed();
  }

  /** Every line, for `gurt task show`. */
  async lines(): Promise<JournalLine[]> {
    const text = await Deno.readTextFile(this.path).catch(() => "");
    const out: JournalLine[] = [];
    for (const raw of text.split("\n")) {
      if (raw === "") continue;
      const parsed = journalLine.safeParse(JSON.parse(raw));
      if (parsed.success) out.push(parsed.data);
    }
    return out;
  }
}

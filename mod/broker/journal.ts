/**
 * A task's action log, tasks/<id>/journal.jsonl: steps, tool calls and results, asks and costs, one
 * JSON line each, synced before the broker answers. Content is redacted before it is written. The
 * journal is also what makes a key's answer the same after a restart.
 *
 * A call's lines go through its own CallJournal: the tool.call line before the tool runs, then the
 * tool.result line, which names the call's Result record's seq (`result`) and is synced beside it.
 * Where the line is on disk and the record is not (a failed audit write, or a crash between the two
 * syncs), a tool.unrecorded line voids the answer, and the call is decided afresh as if the line had
 * never been written.
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

export type { CallAnswer, JournalLine, JournalState, KeyUse };

/** A line checked, redacted and serialised: what the state applies and what the file gets. */
interface Line {
  entry: JournalLine;
  text: string;
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

  /** Appends a line and syncs it; the state reflects it once the promise resolves. */
  append(entry: JournalLine): Promise<void> {
    let line: Line;
    try {
      line = this.#line(entry);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.#writer.append(line.text).then(() => apply(this.state, line.entry));
  }

  /** The journal of one call of this task, for its transaction (call_transaction.ts). */
  call(call: CallIdentity, options: CallJournalOptions): CallJournal {
    const parts: JournalParts = {
      line: (entry) => this.#line(entry),
      append: (entry) => this.append(entry),
      writer: this.#writer,
      state: this.state,
    };
    return new CallJournal(parts, { call, ...options });
  }

  /** Checks, redacts and serialises a line; throws if it is not a line. */
  #line(entry: JournalLine): Line {
    const redact = this.#redact;
    const shown = redact === undefined ? entry : redactValue(entry, redact) as JournalLine;
    return { entry: shown, text: JSON.stringify(journalLine.parse(shown)) };
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

/** The call a CallJournal writes for: its task, key and tool, and its input's digest. */
export interface CallIdentity {
  task: string;
  key: string;
  tool: string;
  /** The SHA-256 of the input's canonical JSON, which binds the key on its lines. */
  inputSha256: string;
}

/** What a CallJournal needs besides its call: the time of each line, and the core's log. */
export interface CallJournalOptions {
  clock(): Date;
  log(line: string): void;
}

/**
 * A Result record placed in the audit log and being synced: its seq where the appender told it,
 * and whether it reached the disk.
 */
export interface PlacedRecord {
  seq: number | null;
  synced: Promise<boolean>;
}

/** What a CallJournal uses of its journal: not the Journal's own API. */
interface JournalParts {
  /** Checks, redacts and serialises a line; throws if it is not a line. */
  line(entry: JournalLine): Line;
  /** Journal.append. */
  append(entry: JournalLine): Promise<void>;
  writer: LineWriter;
  state: JournalState;
}

/**
 * One call's lines in its task's journal. `begin` writes the tool.call line once the Decision
 * record is on disk, before the tool runs; `finish` writes the tool.result line (synced beside the
 * Result record for a call that ran, voided if the record fails); `end` syncs a tool.call line that
 * no tool.result line followed. A call that asks the owner or is denied also writes `event` lines.
 */
export class CallJournal {
  readonly #parts: JournalParts;
  readonly #call: CallIdentity;
  readonly #options: CallJournalOptions;
  #begun: UnsyncedLine | null = null;

  constructor(parts: JournalParts, options: CallJournalOptions & { call: CallIdentity }) {
    this.#parts = parts;
    this.#call = options.call;
    this.#options = options;
  }

  /** The tool the call is for. */
  get tool(): string {
    return this.#call.tool;
  }

  /** Appends an event about the call (approval_pending, tool_denied); a failure is logged. */
  async event(event: string, detail: unknown): Promise<void> {
    const time = this.#time();
    await this.#parts.append({ type: "event", time, event, detail })
      .catch((error) => this.#options.log(`gurt: the ${event} event was not journalled: ${error}`));
  }

  /**
   * Writes the tool.call line of the call allowed by Decision record `decision` into the file at
   * once, with `input` (redacted) as the task sent it: readers of the file see it before the tool
   * runs. It is synced by `sync`, or with the tool.result line where the tool's run ended at once.
   */
  begin(decision: number, input: unknown): void {
    const { key, tool, inputSha256 } = this.#call;
    let line: Line;
    try {
      line = this.#parts.line({
        type: "tool.call",
        time: this.#time(),
        key,
        tool,
        input,
        decision,
        input_sha256: inputSha256,
      });
    } catch (error) {
      this.#begun = { synced: Promise.reject(error), waiting: () => false };
      this.#begun.synced.catch(() => {}); // awaited by finish, which throws it
      return;
    }
    const written = this.#parts.writer.writeNow(line.text);
    const synced = written.synced.then(() => apply(this.#parts.state, line.entry));
    synced.catch(() => {}); // awaited by finish
    this.#begun = { synced, waiting: written.waiting };
  }

  /** Starts the sync of the tool.call line (the tool waits on something), unless one is started. */
  sync(): void {
    this.#parts.writer.sync();
  }

  /**
   * Ends the call with its answer and the cents it charges: the tool.result line, and `true` once
   * it answers the call's key. A denial has no `record`. For a call that ran, `record` is its
   * Result record: the line names it and is synced beside it, and answers the key (and charges the
   * cost) only once both are on disk; where the record fails, the line, which may be on disk, is
   * voided (tool.unrecorded), so that no answer ever goes out, now or after a restart, without its
   * Result record, and this resolves `false`.
   */
  async finish(
    answer: CallAnswer,
    options: { cost: number; record?: PlacedRecord },
  ): Promise<boolean> {
    const { record, cost } = options;
    if (record === undefined) {
      await this.#parts.append(this.#result(answer, { cost, seq: null }));
      return true;
    }
    if (record.seq === null) return await this.#afterRecord(answer, { cost, record });
    return await this.#besideRecord(answer, { cost, seq: record.seq, synced: record.synced });
  }

  /** Syncs a tool.call line that no tool.result line followed (the call ended otherwise). */
  end(): void {
    this.#parts.writer.sync();
  }

  /** The tool.result line written and synced while the Result record `seq` is synced. */
  async #besideRecord(
    answer: CallAnswer,
    record: { cost: number; seq: number; synced: Promise<boolean> },
  ): Promise<boolean> {
    let line: Line;
    try {
      line = this.#parts.line(this.#result(answer, record));
    } catch (error) {
      if (await record.synced) throw error;
      return false;
    }
    // Its sync covers the tool.call line where that one's has not been started.
    const held = Promise.all([this.#begun?.synced, this.#parts.writer.append(line.text)]);
    held.catch(() => {}); // awaited below
    if (!(await record.synced)) {
      await this.#void(held, record.seq);
      return false;
    }
    await held;
    apply(this.#parts.state, line.entry);
    return true;
  }

  /** The tool.result line appended once a Result record whose seq was not told is on disk. */
  async #afterRecord(
    answer: CallAnswer,
    options: { cost: number; record: PlacedRecord },
  ): Promise<boolean> {
    const entry = this.#result(answer, { cost: options.cost, seq: null });
    if (!(await options.record.synced)) return false;
    await Promise.all([this.#begun?.synced, this.#parts.append(entry)]);
    return true;
  }

  /**
   * Voids a tool.result line whose Result record failed: the line may be on disk, and after a
   * restart it must not answer its key with content the log never recorded.
   */
  async #void(held: Promise<unknown>, seq: number): Promise<void> {
    await held.catch(() => {});
    const { task, key } = this.#call;
    await this.#parts.append({ type: "tool.unrecorded", time: this.#time(), key, result: seq })
      .catch((error) =>
        this.#options.log(
          `gurt: the result line of a call of task ${task} could not be voided (${
            describe(error)
          }); the next start voids it`,
        )
      );
  }

  #result(answer: CallAnswer, options: { cost: number; seq: number | null }): JournalLine {
    const { key, tool, inputSha256 } = this.#call;
    return {
      type: "tool.result",
      time: this.#time(),
      key,
      tool,
      answer,
      cost: options.cost,
      ...(options.seq === null ? {} : { result: options.seq }),
      input_sha256: inputSha256,
    };
  }

  #time(): string {
    return this.#options.clock().toISOString();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

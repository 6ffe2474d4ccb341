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
import { z } from "zod";
import { appendLineSynced, writeLine } from "./files.ts";
import { redactValue } from "./redact_value.ts";

/** What a /call answered: `{ok, output}` or `{ok: false, error}`. */
export type CallAnswer = { ok: true; output: unknown } | { ok: false; error: string };

const callAnswer = z.union([
  z.strictObject({ ok: z.literal(true), output: z.unknown() }),
  z.strictObject({ ok: z.literal(false), error: z.string() }),
]);

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

const line = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("step"),
    time: z.string(),
    text: z.string(),
    data: z.unknown(),
  }),
  z.strictObject({
    type: z.literal("tool.call"),
    time: z.string(),
    key: z.string(),
    tool: z.string(),
    input: z.unknown(),
    decision: z.number().int().nullable(),
    /** The SHA-256 of the input's canonical JSON: what the key was used for (absent in old lines). */
    input_sha256: sha256.optional(),
  }),
  z.strictObject({
    type: z.literal("tool.result"),
    time: z.string(),
    key: z.string(),
    tool: z.string(),
    answer: callAnswer,
    cost: z.number().int().min(0),
    /** The seq of the call's Result record; absent for a denial, which has none. */
    result: z.number().int().min(0).optional(),
    /** As on the tool.call line; a denial has no tool.call line, so this binds its key. */
    input_sha256: sha256.optional(),
  }),
  z.strictObject({
    type: z.literal("tool.unrecorded"),
    time: z.string(),
    key: z.string(),
    /** The Result record the voided tool.result line named, which never reached the log. */
    result: z.number().int().min(0),
  }),
  z.strictObject({
    type: z.literal("ask"),
    time: z.string(),
    key: z.string(),
    question: z.string(),
    approval: z.number().int(),
  }),
  z.strictObject({
    type: z.literal("ask.answer"),
    time: z.string(),
    key: z.string(),
    approved: z.boolean(),
  }),
  z.strictObject({
    type: z.literal("cost"),
    time: z.string(),
    cents: z.number().int().min(0),
    what: z.string(),
    model: z.string().optional(),
  }),
  z.strictObject({
    type: z.literal("event"),
    time: z.string(),
    event: z.string(),
    detail: z.unknown(),
  }),
]);

/** One journal line. */
export type JournalLine = z.infer<typeof line>;

/**
 * The call a key was used for: its tool and the SHA-256 of its canonical input (null for a line
 * written before the journal kept it; such a key is known by its tool only).
 */
export interface KeyUse {
  tool: string;
  inputSha256: string | null;
}

/** What a journal says about its task once read: steps, spending, and the answers by key. */
export interface JournalState {
  steps: { text: string; data: unknown }[];
  spentCents: number;
  calls: Map<string, CallAnswer>;
  /**
   * What each call key was used for, from its tool.call or tool.result line. A voided answer
   * (tool.unrecorded) leaves it: the call may have run, and only the same call may run again.
   */
  keys: Map<string, KeyUse>;
  /** For a key answered by a tool.result line naming its Result record: that seq and the cost. */
  recorded: Map<string, { result: number; cost: number }>;
  asks: Map<string, boolean>;
  /** Lines that did not parse: a torn last line after a crash, never acknowledged. */
  skipped: number;
}

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

/** A line appendUnsynced wrote: `waiting` while no sync that covers it has started. */
export interface UnsyncedLine {
  synced: Promise<void>;
  waiting(): boolean;
}

/** A line waiting for the next write of the journal. */
interface Queued {
  entry: JournalLine;
  text: string;
  /** Not applied to the state when synced: `commit` applies it. */
  held: boolean;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * One task's journal. Appends never interleave: lines that arrive while a write and its sync are
 * under way go out together in the next one (group commit), each in the order it was appended.
 * The file is opened at the first append and kept open until `close` (an open costs as much as the
 * write it precedes); after `close`, each append opens and closes it.
 */
export class Journal {
  readonly state: JournalState;
  readonly #redact: ((text: string) => string) | undefined;
  #appended = Promise.withResolvers<void>();
  #queue: Queued[] = [];
  #flushing = false;
  #file: Deno.FsFile | null = null;
  #closed = false;
  /** Lines appendUnsynced wrote that no sync has covered yet, in file order. */
  #unsynced: Queued[] = [];
  /**
   * The file ends in a torn line (a crash cut a write short): the next write first ends it with a
   * newline, or the line written would be glued to it, fail to parse and be lost.
   */
  #torn: boolean;

  private constructor(
    readonly path: string,
    state: JournalState,
    redact: ((text: string) => string) | undefined,
    torn: boolean,
  ) {
    this.state = state;
    this.#redact = redact;
    this.#torn = torn;
  }

  /**
   * Opens the journal at `path`, reading what it already holds. With `redact`, every string of
   * every line appended (and of the state it updates) goes through it first: the vault's backstop.
   */
  static async open(
    path: string,
    options: { redact?: (text: string) => string } = {},
  ): Promise<Journal> {
    const state: JournalState = {
      steps: [],
      spentCents: 0,
      calls: new Map(),
      keys: new Map(),
      recorded: new Map(),
      asks: new Map(),
      skipped: 0,
    };
    let text = "";
    try {
      text = await Deno.readTextFile(path);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    for (const raw of text.split("\n")) {
      if (raw === "") continue;
      let parsed: JournalLine;
      try {
        parsed = line.parse(JSON.parse(raw));
      } catch {
        state.skipped++;
        continue;
      }
      apply(state, parsed);
    }
    return new Journal(path, state, options.redact, text !== "" && !text.endsWith("\n"));
  }

  /** Checks, redacts and serialises a line for a later append; throws if it is not a line. */
  prepare(entry: JournalLine): PreparedLine {
    const redact = this.#redact;
    const shown = redact === undefined ? entry : redactValue(entry, redact) as JournalLine;
    return PreparedLine.make(this, shown, JSON.stringify(line.parse(shown)));
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
    const { entry: shown, text } = prepared;
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    this.#queue.push({ entry: shown, text, held: options.held === true, resolve, reject });
    if (!this.#flushing) this.#flush();
    return promise;
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
    if (this.#flushing || this.#queue.length > 0 || this.#closed) {
      return { synced: this.append(prepared), waiting: () => false };
    }
    try {
      this.#writeKept(prepared.text);
    } catch (error) {
      this.#release(); // the next append opens the file afresh
      return { synced: Promise.reject(error), waiting: () => false };
    }
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const queued = { entry: prepared.entry, text: prepared.text, held: false, resolve, reject };
    this.#unsynced.push(queued);
    return { synced: promise, waiting: () => this.#unsynced.includes(queued) };
  }

  /** Starts a sync of the lines appendUnsynced wrote, unless one is already under way. */
  syncUnsynced(): void {
    if (this.#unsynced.length > 0 && !this.#flushing) this.#flush();
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    while (this.#queue.length > 0 || this.#unsynced.length > 0) {
      // Lines already in the file come before those written now; one sync covers them all.
      const fresh = this.#queue.splice(0);
      const batch = [...this.#unsynced.splice(0), ...fresh];
      try {
        await this.#write(
          fresh.length === 0 ? null : fresh.map((queued) => queued.text).join("\n"),
        );
      } catch (error) {
        for (const queued of batch) queued.reject(error);
        continue;
      }
      for (const queued of batch) {
        if (!queued.held) apply(this.state, queued.entry);
        queued.resolve();
      }
      this.#appended.resolve();
      this.#appended = Promise.withResolvers<void>();
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
    writeLine(this.#kept(), this.#afterTear(lines));
    this.#torn = false;
  }

  /** Appends the lines (if any) and a newline to the file, and syncs it. */
  async #write(lines: string | null): Promise<void> {
    if (this.#closed && this.#file === null) {
      if (lines !== null) {
        await appendLineSynced(this.path, this.#afterTear(lines));
        this.#torn = false;
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

  /**
   * Closes the kept file once no write is under way and the lines not yet synced are; later appends
   * open it for each write.
   */
  close(): void {
    this.#closed = true;
    if (this.#flushing) return;
    if (this.#unsynced.length > 0) this.#flush();
    else this.#release();
  }

  #release(): void {
    this.#file?.close();
    this.#file = null;
  }

  /** Resolves when the next line has been appended (for followers of the journal). */
  appended(): Promise<void> {
    return this.#appended.promise;
  }

  /** Every line, for `gurt task show`. */
  async lines(): Promise<JournalLine[]> {
    const text = await Deno.readTextFile(this.path).catch(() => "");
    const out: JournalLine[] = [];
    for (const raw of text.split("\n")) {
      if (raw === "") continue;
      const parsed = line.safeParse(JSON.parse(raw));
      if (parsed.success) out.push(parsed.data);
    }
    return out;
  }
}

function apply(state: JournalState, entry: JournalLine): void {
  switch (entry.type) {
    case "step":
      state.steps.push({ text: entry.text, data: entry.data });
      break;
    case "tool.call":
      useKey(state, entry.key, entry.tool, entry.input_sha256);
      break;
    case "tool.result":
      useKey(state, entry.key, entry.tool, entry.input_sha256);
      state.calls.set(entry.key, entry.answer);
      state.spentCents += entry.cost;
      if (entry.result === undefined) state.recorded.delete(entry.key);
      else state.recorded.set(entry.key, { result: entry.result, cost: entry.cost });
      break;
    case "tool.unrecorded": {
      // Voids the answer only if it is still the one the line names.
      const recorded = state.recorded.get(entry.key);
      if (recorded?.result !== entry.result) break;
      state.calls.delete(entry.key);
      state.spentCents -= recorded.cost;
      state.recorded.delete(entry.key);
      break;
    }
    case "ask.answer":
      state.asks.set(entry.key, entry.approved);
      break;
    case "cost":
      state.spentCents += entry.cents;
      break;
    default:
      break;
  }
}

/** Records what `key` was used for; a line without a digest does not forget one already known. */
function useKey(state: JournalState, key: string, tool: string, digest: string | undefined): void {
  const known = state.keys.get(key);
  if (digest === undefined && known !== undefined && known.tool === tool) return;
  state.keys.set(key, { tool, inputSha256: digest ?? null });
}

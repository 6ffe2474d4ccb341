/**
 * The chain verifier's judging (seed 002 §5), a pure state machine: no I/O, no clock, and no
 * hashing or parsing either, so that its callers choose how lines are hashed and parsed. It holds
 * each line back until it has seen the next one (a Recovery record may follow it), and judges it
 * then or at finish. It imports nothing at run time: the CLI's `gurt audit verify` loads it without
 * zod or node:crypto.
 */
import type {
  AcceptedBreakAt,
  ChainFailure,
  ChainReport,
  Checkpoint,
  HeadRecord,
  Location,
  TornTail,
} from "./chain_report.ts";
import { ZERO_HASH } from "./record_check.ts";
import type { AuditRecord } from "./records.ts";

interface Line {
  at: Location;
  bytes: number;
  hasNewline: boolean;
  hash: string;
  record: AuditRecord | null;
  error: string | null;
  /** A Recovery record that recovered the line before it. */
  recovering: boolean;
}

interface Region {
  at: Location;
  what: string;
  lastGood: string;
  /** The seq the failing line should have had. */
  seq: number;
  /** Lines in the region so far, the failing line included. */
  lines: number;
}

/** A line as the machine takes it: what the line was, its hash, and its record or why not. */
export interface LineInput {
  /** The line's length in bytes, without its newline. */
  bytes: number;
  /** False only for a file's last line when it has no newline. */
  hasNewline: boolean;
  /** The SHA-256 of the line's bytes, as 64 lowercase hex digits. */
  hash: string;
  /** The record, or null with the reason in `error`. */
  record: AuditRecord | null;
  error: string | null;
}

/** Options of a new verifier. */
export interface VerifierOptions {
  /** Lines the owner kept off the box; those no verified record matches are reported. */
  checkpoints?: Checkpoint[];
}

/**
 * The judging state machine of a verifier, fed lines already hashed and parsed. ChainVerifier
 * hashes and parses each line itself; verifyHome has the hashing done by a second thread.
 */
export class ChainMachine {
  #head: string;
  #headKnown: boolean;
  /** The head record's line and seq; its HeadRecord is made at finish, not at every record. */
  #headLine: Line | null = null;
  #headSeq = 0;
  #nextSeq: number;
  #resumed: boolean;
  #records = 0;
  #firstFile: string | null = null;
  #file = "";
  #lineNo = 0;
  #pending: Line | null = null;
  #region: Region | null = null;
  /** The hash of the last line fed, whatever it was. */
  #lastHash: string;
  #lastLine: Line | null = null;
  #lastTime: string | null = null;
  #recoveries: Location[] = [];
  #breaks: AcceptedBreakAt[] = [];
  #asks = new Set<number>();
  #allowed = new Set<number>();
  #clockWarnings: Location[] = [];
  #checkpoints = new Map<string, Checkpoint>();

  /** A verifier for a whole log: it expects seq 0 and a prev of all zeros. */
  constructor(options: VerifierOptions = {}) {
    this.#head = ZERO_HASH;
    this.#headKnown = false;
    this.#nextSeq = 0;
    this.#resumed = false;
    this.#lastHash = ZERO_HASH;
    for (const checkpoint of options.checkpoints ?? []) {
      this.#checkpoints.set(checkpointKey(checkpoint), checkpoint);
    }
  }

  /** A machine that continues from a known point: the next seq and the hash of the line before. */
  static resume(nextSeq: number, prev: string, options: VerifierOptions = {}): ChainMachine {
    const verifier = new ChainMachine(options);
    verifier.#head = prev;
    verifier.#headKnown = true;
    verifier.#nextSeq = nextSeq;
    verifier.#resumed = true;
    verifier.#lastHash = prev;
    return verifier;
  }

  /** Starts the next file; files must be given in name order. */
  file(name: string): void {
    this.#file = name;
    this.#lineNo = 0;
    if (this.#firstFile === null) this.#firstFile = name;
  }

  /** The next line of the current file, hashed and parsed. */
  line(input: LineInput): void {
    this.#lineNo++;
    const line: Line = {
      at: { file: this.#file, line: this.#lineNo },
      bytes: input.bytes,
      hasNewline: input.hasNewline,
      hash: input.hash,
      record: input.record,
      error: input.error,
      recovering: false,
    };
    if (this.#region === null && this.#pending !== null) this.#judge(this.#pending, line);
    if (this.#region === null) {
      this.#pending = line;
    } else {
      this.#pending = null;
      this.#regionLine(line);
    }
    this.#lastHash = line.hash;
    this.#lastLine = line;
  }

  /** Judges the line held back and returns the whole report. */
  finish(): ChainReport {
    let tornTail: TornTail | null = null;
    const pending = this.#pending;
    this.#pending = null;
    if (pending !== null && this.#region === null) {
      if (!pending.hasNewline || pending.record === null) {
        tornTail = {
          at: pending.at,
          has_newline: pending.hasNewline,
          bytes: pending.bytes,
          sha256: pending.hash,
          recovery_prev: this.#head,
          recovery_seq: this.#nextSeq,
        };
      } else {
        this.#judge(pending, null);
      }
    }
    let failure: ChainFailure | null = null;
    if (this.#region !== null) {
      const region = this.#region;
      failure = {
        file: region.at.file,
        line: region.at.line,
        what: region.what,
        last_good: region.lastGood,
        break_prev: this.#lastHash,
        break_seq: region.seq + region.lines,
        tail_torn: this.#lastLine !== null && !this.#lastLine.hasNewline,
      };
    }
    return {
      records: this.#records,
      head: this.#headKnown ? this.#head : null,
      head_at: this.#headAtRecord(),
      next_seq: this.#nextSeq,
      failure,
      recoveries: this.#recoveries,
      accepted_breaks: this.#breaks,
      abandoned: [...this.#asks].sort((a, b) => a - b),
      unfinished: [...this.#allowed].sort((a, b) => a - b),
      clock_warnings: this.#clockWarnings,
      torn_tail: tornTail,
      last_line: this.#lastLine === null ? null : this.#lastLine.at,
      checkpoints_missing: [...this.#checkpoints.values()],
    };
  }

  /** Judges a held-back line, now that the line after it (or the end) is known. */
  #judge(line: Line, next: Line | null): void {
    if (next !== null && this.#recovers(next, line)) {
      next.recovering = true;
      this.#recoveries.push(line.at);
      return;
    }
    if (line.record === null) return this.#fail(line, line.error ?? "the line is not a record");
    if (!line.hasNewline) {
      return this.#fail(line, "the line has no newline, and only the log's last line may lack one");
    }
    const record = line.record;
    if (record.event.type === "accepted_break") {
      if (this.#fromBeforeResume(record) && record.prev === this.#head) {
        return this.#acceptBreak(line, record);
      }
      if (record.prev !== this.#head) return this.#fail(line, this.#prevProblem(line));
      return this.#fail(line, "an accepted break where the chain before it is not broken");
    }
    if (record.seq !== this.#nextSeq) {
      return this.#fail(line, `seq is ${record.seq}, expected ${this.#nextSeq}`);
    }
    if (record.prev !== this.#head) return this.#fail(line, this.#prevProblem(line));
    if (record.event.type === "recovery" && !line.recovering) {
      return this.#fail(line, "a recovery record that describes no torn line before it");
    }
    this.#accept(line);
  }

  #headAtRecord(): HeadRecord | null {
    const line = this.#headLine;
    return line === null ? null : { file: line.at.file, line: line.at.line, seq: this.#headSeq };
  }

  /** Whether `next` is a Recovery record that describes exactly `line`. */
  #recovers(next: Line, line: Line): boolean {
    const record = next.record;
    if (record === null || record.event.type !== "recovery") return false;
    return record.event.torn_bytes === line.bytes && record.event.torn_sha256 === line.hash &&
      record.prev === this.#head && record.seq === this.#nextSeq;
  }

  #prevProblem(line: Line): string {
    // Line 1 with a head already known: the line before it is the previous file's last.
    return line.at.line === 1 && this.#headKnown
      ? "the file does not chain from the last line of the file before it: prev differs"
      : "prev is not the hash of the line before";
  }

  /** A line that verified: it becomes the head. */
  #accept(line: Line): void {
    const record = line.record as AuditRecord;
    this.#head = line.hash;
    this.#headKnown = true;
    this.#headLine = line;
    this.#headSeq = record.seq;
    this.#nextSeq = record.seq + 1;
    this.#records++;
    if (this.#lastTime !== null && record.time < this.#lastTime) {
      this.#clockWarnings.push(line.at);
    }
    this.#lastTime = record.time;
    const event = record.event;
    if (event.type === "decision") {
      if (event.outcome.outcome === "ask") this.#asks.add(record.seq);
      if (event.outcome.outcome === "allowed") this.#allowed.add(record.seq);
    } else if (event.type === "approval") {
      this.#asks.delete(event.decision);
      if (event.answer === "approved" && event.outcome.outcome !== "denied") {
        this.#allowed.add(event.decision);
      }
    } else if (event.type === "result") {
      this.#allowed.delete(event.decision);
    }
    if (this.#checkpoints.size > 0) {
      this.#checkpoints.delete(checkpointKey({ seq: record.seq, ...line.at, sha256: line.hash }));
    }
  }

  /** An AcceptedBreak record that was accepted: reported, and the new head. */
  #acceptBreak(line: Line, record: AuditRecord): void {
    if (record.event.type !== "accepted_break") return;
    this.#breaks.push({ ...line.at, broke: { file: record.event.file, line: record.event.line } });
    this.#accept(line);
  }

  /** The first failure since the last accepted break: a region starts at this line. */
  #fail(line: Line, what: string): void {
    this.#region = { at: line.at, what, lastGood: this.#head, seq: this.#nextSeq, lines: 1 };
  }

  /** A line inside a failed region: read only to look for the break record that ends it. */
  #regionLine(line: Line): void {
    const region = this.#region as Region;
    const record = line.record;
    if (
      record !== null && record.event.type === "accepted_break" && line.hasNewline &&
      record.prev === this.#lastHash
    ) {
      const event = record.event;
      const names = event.file === region.at.file && event.line === region.at.line &&
        event.last_good === region.lastGood && record.seq === region.seq + region.lines;
      if (names || this.#fromBeforeResume(record)) {
        this.#region = null;
        this.#acceptBreak(line, record);
        return;
      }
    }
    region.lines++;
  }

  /** A break record a resumed verifier cannot judge: its failure lies in a file it was not given. */
  #fromBeforeResume(record: AuditRecord): boolean {
    return this.#resumed && record.event.type === "accepted_break" &&
      this.#firstFile !== null && record.event.file < this.#firstFile;
  }
}

function checkpointKey(checkpoint: Checkpoint): string {
  return `${checkpoint.seq} ${checkpoint.file} ${checkpoint.sha256}`;
}

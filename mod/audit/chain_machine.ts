/**
 * The chain verifier's judging (docs/audit.md#the-chain), a pure state machine: no I/O, no clock,
 * and no hashing or parsing either, so that its callers choose how lines are hashed and parsed. It
 * holds each line back until it has seen the next one (a Recovery record may follow it), and judges
 * it then or at finish. It imports nothing at run time: the CLI's `gurt audit verify` loads it
 * without zod or node:crypto.
 *
 * A line costs it no allocation: it is held in one of two reused Lines, and what the report keeps
 * of it is copied out. A line the compact scanner read is judged by numbers; its hash and prev stay
 * bytes until a comparison or the report needs them as hex. Right after the line before was
 * accepted, the head is that line's hash, so the feeder's comparison of the prev with that hash's
 * bytes (CompactLine.prevIsLast) decides `prev === head` alone; any other time both are made hex.
 */
import type {
  AcceptedBreakAt,
  ChainFailure,
  ChainReport,
  Checkpoint,
  Location,
  TornTail,
} from "./chain_report.ts";
import {
  ALLOWED,
  APPROVAL,
  ASK,
  BREAK,
  type CompactLine,
  DECISION,
  DENIED,
  hashOf,
  hexOf,
  Line,
  type LineInput,
  NO_BYTES,
  prevOf,
  RECOVERY,
  RESULT,
} from "./chain_line.ts";
import { ZERO_HASH } from "./record_check.ts";

interface Region {
  at: Location;
  what: string;
  lastGood: string;
  /** The seq the failing line should have had. */
  seq: number;
  /** Lines in the region so far, the failing line included. */
  lines: number;
}

/**
 * A machine's state before the last line it was fed (which it still holds back), as plain data:
 * what a reader keeps on disk to go on later by feeding that line again, then the lines after it.
 */
export interface MachineState {
  head: string;
  headKnown: boolean;
  headFile: string | null;
  headNo: number;
  headSeq: number;
  acceptedIndex: number;
  nextSeq: number;
  resumed: boolean;
  records: number;
  firstFile: string | null;
  file: string;
  lineNo: number;
  fed: number;
  lastDate: number;
  lastClock: number;
  recoveries: Location[];
  breaks: AcceptedBreakAt[];
  asks: number[];
  allowed: number[];
  clockWarnings: Location[];
  checkpoints: Checkpoint[];
}

/** Options of a new verifier. */
export interface VerifierOptions {
  /** Lines the owner kept off the box; those no verified record matches are reported. */
  checkpoints?: Checkpoint[];
}

/**
 * The judging state machine of a verifier, fed lines already hashed and parsed. ChainVerifier
 * hashes and parses each line itself; verifyHome has the hashing done by a second thread, and
 * feeds most lines as the compact scanner reads them.
 */
export class ChainMachine {
  /** The head's hash: as hex, or null while it is only the digest at #headAt in #headDigests. */
  #head: string | null;
  #headDigests: Uint8Array = NO_BYTES;
  #headAt = 0;
  #headKnown: boolean;
  /** Where the head record is; its HeadRecord is made at finish, not at every record. */
  #headFile: string | null = null;
  #headNo = 0;
  #headSeq = 0;
  /** The index of the line last accepted: when it is the line before, the head is its hash. */
  #acceptedIndex = -2;
  #nextSeq: number;
  #resumed: boolean;
  #records = 0;
  #firstFile: string | null = null;
  #file = "";
  #lineNo = 0;
  #fed = 0;
  #pending: Line | null = null;
  #slots = [new Line(), new Line()];
  #region: Region | null = null;
  /** The hash of the last line fed, whatever it was: as the head's. */
  #lastHash: string | null;
  #lastDigests: Uint8Array = NO_BYTES;
  #lastAt = 0;
  /** The last line fed, if any: where it is and whether it has a newline. */
  #lastFile: string | null = null;
  #lastNo = 0;
  #lastHasNewline = false;
  /** The time of the last record accepted, as CompactLine's date and clock; -1 for none. */
  #lastDate = -1;
  #lastClock = 0;
  #recoveries: Location[] = [];
  #breaks: AcceptedBreakAt[] = [];
  #asks = new Set<number>();
  #allowed = new Set<number>();
  #clockWarnings: Location[] = [];
  #checkpoints = new Map<string, Checkpoint>();
  /** The seqs of the checkpoints, so that a record whose seq none has needs no hash as hex. */
  #checkpointSeqs = new Set<number>();

  /** A verifier for a whole log: it expects seq 0 and a prev of all zeros. */
  constructor(options: VerifierOptions = {}) {
    this.#head = ZERO_HASH;
    this.#headKnown = false;
    this.#nextSeq = 0;
    this.#resumed = false;
    this.#lastHash = ZERO_HASH;
    for (const checkpoint of options.checkpoints ?? []) {
      this.#checkpoints.set(checkpointKey(checkpoint), checkpoint);
      this.#checkpointSeqs.add(checkpoint.seq);
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

  /**
   * The state before the line held back, to go on from by feeding that line again (see restore);
   * null when no line is held back, or inside a failed region (a reader starts over then).
   */
  stateBeforeLast(): MachineState | null {
    const pending = this.#pending;
    if (pending === null || this.#region !== null) return null;
    return {
      head: this.#headHash(),
      headKnown: this.#headKnown,
      headFile: this.#headFile,
      headNo: this.#headNo,
      headSeq: this.#headSeq,
      acceptedIndex: this.#acceptedIndex,
      nextSeq: this.#nextSeq,
      resumed: this.#resumed,
      records: this.#records,
      firstFile: this.#firstFile,
      file: pending.file,
      lineNo: pending.no - 1,
      fed: pending.index,
      lastDate: this.#lastDate,
      lastClock: this.#lastClock,
      recoveries: [...this.#recoveries],
      breaks: [...this.#breaks],
      asks: [...this.#asks],
      allowed: [...this.#allowed],
      clockWarnings: [...this.#clockWarnings],
      checkpoints: [...this.#checkpoints.values()],
    };
  }

  /** A machine in the state `stateBeforeLast` gave: feed it that last line next. */
  static restore(state: MachineState): ChainMachine {
    const machine = new ChainMachine({ checkpoints: state.checkpoints });
    machine.#head = state.head;
    machine.#headKnown = state.headKnown;
    machine.#headFile = state.headFile;
    machine.#headNo = state.headNo;
    machine.#headSeq = state.headSeq;
    machine.#acceptedIndex = state.acceptedIndex;
    machine.#nextSeq = state.nextSeq;
    machine.#resumed = state.resumed;
    machine.#records = state.records;
    machine.#firstFile = state.firstFile;
    machine.#file = state.file;
    machine.#lineNo = state.lineNo;
    machine.#fed = state.fed;
    machine.#lastDate = state.lastDate;
    machine.#lastClock = state.lastClock;
    machine.#recoveries = [...state.recoveries];
    machine.#breaks = [...state.breaks];
    machine.#asks = new Set(state.asks);
    machine.#allowed = new Set(state.allowed);
    machine.#clockWarnings = [...state.clockWarnings];
    return machine;
  }

  /**
   * Starts the next file; files must be given in name order. `linesBefore`: the lines of the file
   * before the first one fed (a resume from the middle of a file), for the lines' numbers.
   */
  file(name: string, linesBefore = 0): void {
    this.#file = name;
    this.#lineNo = linesBefore;
    if (this.#firstFile === null) this.#firstFile = name;
  }

  /** The next line of the current file, hashed and parsed. */
  line(input: LineInput): void {
    const line = this.#nextSlot();
    line.setInput(input);
    this.#feed(line);
  }

  /** The next line of the current file, as the compact scanner read it: a record. */
  compactLine(input: CompactLine): void {
    const line = this.#nextSlot();
    line.setCompact(input);
    this.#feed(line);
  }

  /** The slot not held back, numbered as the next line of the current file. */
  #nextSlot(): Line {
    const line = this.#slots[0] === this.#pending ? this.#slots[1] : this.#slots[0];
    line.file = this.#file;
    line.no = ++this.#lineNo;
    line.index = this.#fed++;
    line.recovering = false;
    return line;
  }

  #feed(line: Line): void {
    if (this.#region === null && this.#pending !== null) this.#judge(this.#pending, line);
    if (this.#region === null) {
      this.#pending = line;
    } else {
      this.#pending = null;
      this.#regionLine(line);
    }
    this.#lastHash = line.hash;
    this.#lastDigests = line.digests;
    this.#lastAt = line.digestAt;
    this.#lastFile = line.file;
    this.#lastNo = line.no;
    this.#lastHasNewline = line.hasNewline;
  }

  /** Judges the line held back and returns the whole report. */
  finish(): ChainReport {
    let tornTail: TornTail | null = null;
    const pending = this.#pending;
    this.#pending = null;
    if (pending !== null && this.#region === null) {
      if (!pending.hasNewline || !pending.isRecord) {
        tornTail = {
          at: { file: pending.file, line: pending.no },
          has_newline: pending.hasNewline,
          bytes: pending.bytes,
          sha256: hashOf(pending),
          recovery_prev: this.#headHash(),
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
        break_prev: this.#lastHashHex(),
        break_seq: region.seq + region.lines,
        tail_torn: this.#lastFile !== null && !this.#lastHasNewline,
      };
    }
    return {
      records: this.#records,
      head: this.#headKnown ? this.#headHash() : null,
      head_at: this.#headFile === null
        ? null
        : { file: this.#headFile, line: this.#headNo, seq: this.#headSeq },
      next_seq: this.#nextSeq,
      failure,
      recoveries: this.#recoveries,
      accepted_breaks: this.#breaks,
      abandoned: [...this.#asks].sort((a, b) => a - b),
      unfinished: [...this.#allowed].sort((a, b) => a - b),
      clock_warnings: this.#clockWarnings,
      torn_tail: tornTail,
      last_line: this.#lastFile === null ? null : { file: this.#lastFile, line: this.#lastNo },
      checkpoints_missing: [...this.#checkpoints.values()],
    };
  }

  /** Judges a held-back line, now that the line after it (or the end) is known. */
  #judge(line: Line, next: Line | null): void {
    if (next !== null && this.#recovers(next, line)) {
      next.recovering = true;
      this.#recoveries.push({ file: line.file, line: line.no });
      return;
    }
    if (!line.isRecord) return this.#fail(line, line.error ?? "the line is not a record");
    if (!line.hasNewline) {
      return this.#fail(line, "the line has no newline, and only the log's last line may lack one");
    }
    if (line.type === BREAK) {
      if (this.#fromBeforeResume(line) && this.#prevIsHead(line)) return this.#acceptBreak(line);
      if (!this.#prevIsHead(line)) return this.#fail(line, this.#prevProblem(line));
      return this.#fail(line, "an accepted break where the chain before it is not broken");
    }
    if (line.seq !== this.#nextSeq) {
      return this.#fail(line, `seq is ${line.seq}, expected ${this.#nextSeq}`);
    }
    if (!this.#prevIsHead(line)) return this.#fail(line, this.#prevProblem(line));
    if (line.type === RECOVERY && !line.recovering) {
      return this.#fail(line, "a recovery record that describes no torn line before it");
    }
    this.#accept(line);
  }

  /** Whether the line's prev is the head's hash; without making either hex when it can. */
  #prevIsHead(line: Line): boolean {
    // Right after the line before was accepted, the head is that line's hash.
    if (line.prevIsLast && this.#acceptedIndex === line.index - 1) return true;
    return prevOf(line) === this.#headHash();
  }

  #headHash(): string {
    this.#head ??= hexOf(this.#headDigests, this.#headAt);
    return this.#head;
  }

  #lastHashHex(): string {
    this.#lastHash ??= hexOf(this.#lastDigests, this.#lastAt);
    return this.#lastHash;
  }

  /** Whether `next` is a Recovery record that describes exactly `line`. */
  #recovers(next: Line, line: Line): boolean {
    const record = next.record;
    if (record === null || record.event.type !== "recovery") return false;
    return record.event.torn_bytes === line.bytes && record.event.torn_sha256 === hashOf(line) &&
      record.prev === this.#headHash() && record.seq === this.#nextSeq;
  }

  #prevProblem(line: Line): string {
    // Line 1 with a head already known: the line before it is the previous file's last.
    return line.no === 1 && this.#headKnown
      ? "the file does not chain from the last line of the file before it: prev differs"
      : "prev is not the hash of the line before";
  }

  /** A line that verified: it becomes the head. */
  #accept(line: Line): void {
    this.#head = line.hash;
    this.#headDigests = line.digests;
    this.#headAt = line.digestAt;
    this.#headKnown = true;
    this.#headFile = line.file;
    this.#headNo = line.no;
    this.#headSeq = line.seq;
    this.#acceptedIndex = line.index;
    const seq = line.seq;
    this.#nextSeq = seq + 1;
    this.#records++;
    if (
      this.#lastDate > line.date || (this.#lastDate === line.date && this.#lastClock > line.clock)
    ) {
      this.#clockWarnings.push({ file: line.file, line: line.no });
    }
    this.#lastDate = line.date;
    this.#lastClock = line.clock;
    const type = line.type;
    if (type === DECISION) {
      if (line.outcome === ASK) this.#asks.add(seq);
      if (line.outcome === ALLOWED) this.#allowed.add(seq);
    } else if (type === APPROVAL) {
      this.#asks.delete(line.decision);
      if (line.approved && line.outcome !== DENIED) this.#allowed.add(line.decision);
    } else if (type === RESULT) {
      this.#allowed.delete(line.decision);
    }
    if (this.#checkpointSeqs.has(seq)) {
      this.#checkpoints.delete(
        checkpointKey({ seq, file: line.file, sha256: this.#headHash() }),
      );
    }
  }

  /** An AcceptedBreak record that was accepted: reported, and the new head. */
  #acceptBreak(line: Line): void {
    const record = line.record;
    if (record === null || record.event.type !== "accepted_break") return;
    this.#breaks.push({
      file: line.file,
      line: line.no,
      broke: { file: record.event.file, line: record.event.line },
    });
    this.#accept(line);
  }

  /** The first failure since the last accepted break: a region starts at this line. */
  #fail(line: Line, what: string): void {
    this.#region = {
      at: { file: line.file, line: line.no },
      what,
      lastGood: this.#headHash(),
      seq: this.#nextSeq,
      lines: 1,
    };
  }

  /** A line inside a failed region: read only to look for the break record that ends it. */
  #regionLine(line: Line): void {
    const region = this.#region as Region;
    const record = line.record;
    if (
      record !== null && record.event.type === "accepted_break" && line.hasNewline &&
      record.prev === this.#lastHashHex()
    ) {
      const event = record.event;
      const names = event.file === region.at.file && event.line === region.at.line &&
        event.last_good === region.lastGood && record.seq === region.seq + region.lines;
      if (names || this.#fromBeforeResume(line)) {
        this.#region = null;
        this.#acceptBreak(line);
        return;
      }
    }
    region.lines++;
  }

  /** A break record a resumed verifier cannot judge: its failure lies in a file it was not given. */
  #fromBeforeResume(line: Line): boolean {
    const record = line.record;
    return this.#resumed && record !== null && record.event.type === "accepted_break" &&
      this.#firstFile !== null && record.event.file < this.#firstFile;
  }
}

function checkpointKey(checkpoint: Checkpoint): string {
  return `${checkpoint.seq} ${checkpoint.file} ${checkpoint.sha256}`;
}

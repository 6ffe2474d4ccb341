/** What the chain verifier reports (docs/audit.md#what-gurt-audit-verify-checks). */

/** A line of the log: the file's name (not its path) and the 1-based line in it. */
export interface Location {
  file: string;
  line: number;
}

/** An AcceptedBreak record that was accepted, and the failure it accepted. */
export interface AcceptedBreakAt extends Location {
  /** Where the chain broke: the file and line the break record names. */
  broke: Location;
}

/** The first failure since the last accepted break, and what a break appended now must carry. */
export interface ChainFailure {
  file: string;
  line: number;
  what: string;
  /** The hash of the last line that verified before the failure (all zeros if none did). */
  last_good: string;
  /** The hash of the last line fed: the prev of a break record appended now. */
  break_prev: string;
  /** The seq the failing line should have had plus the lines from it to the last line fed. */
  break_seq: number;
  /** The last line fed has no newline. */
  tail_torn: boolean;
}

/** The last line of the last file needs recovery, and what its Recovery record must carry. */
export interface TornTail {
  at: Location;
  has_newline: boolean;
  bytes: number;
  sha256: string;
  recovery_prev: string;
  recovery_seq: number;
}

/** A line the owner keeps off the box: this seq, in this file, had this hash. */
export interface Checkpoint {
  seq: number;
  file: string;
  sha256: string;
}

/** The head record: the last line that verified as a record. */
export interface HeadRecord extends Location {
  seq: number;
}

/** The whole report of one verification. */
export interface ChainReport {
  /** Lines verified as records (recovered lines are not records). */
  records: number;
  /** The hash of the head, or the resume point; null for a log with no record. */
  head: string | null;
  /** Where the head record is; null if no record was read (an empty log, or a resume only). */
  head_at: HeadRecord | null;
  next_seq: number;
  failure: ChainFailure | null;
  recoveries: Location[];
  accepted_breaks: AcceptedBreakAt[];
  /** Seq of Ask decisions with no Approval after them. */
  abandoned: number[];
  /** Seq of decisions allowed, at once or by approval, with no Result after them. */
  unfinished: number[];
  /** Records whose time is earlier than the record before them. */
  clock_warnings: Location[];
  torn_tail: TornTail | null;
  /** The last line fed, in any state; null if no line was fed. */
  last_line: Location | null;
  /** The checkpoints given that no verified record matches. */
  checkpoints_missing: Checkpoint[];
}

/**
 * The lines ChainMachine takes: a line given with its parsed record (LineInput), or a line as the
 * compact scanner read it (CompactLine), and the one shape the machine holds either in (Line),
 * with the event types and outcomes it judges by as numbers. It imports only json_bytes.ts at run
 * time.
 */
import { isoClock, isoDate, timeBytes } from "./json_bytes.ts";
import type { AuditRecord } from "./records.ts";

/** The event types the machine tells apart, as numbers (CompactLine.type). */
export const OTHER = 0;
export const DECISION = 1;
export const APPROVAL = 2;
export const RESULT = 3;
export const RECOVERY = 4;
export const BREAK = 5;
/** A decision's or approval's outcome, as numbers (CompactLine.outcome). */
export const ALLOWED = 1;
export const ASK = 2;
export const DENIED = 3;

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

/**
 * A record line as the compact scanner reads it (compact_scanner.ts): only what the machine judges
 * by, as numbers, with its hash and its prev left where they are until they are needed. Never a
 * Recovery or AcceptedBreak record.
 */
export interface CompactLine {
  /** The line's length in bytes, without its newline. */
  bytes: number;
  hasNewline: boolean;
  /** The line's SHA-256 is the 32 bytes at `digestAt`. */
  digests: Uint8Array;
  digestAt: number;
  /** The line's prev is the 64 hex digits at `prevAt` in `content`. */
  content: Uint8Array;
  prevAt: number;
  /** The prev is the hash of the line fed before this one. */
  prevIsLast: boolean;
  seq: number;
  /** The time as YYYYMMDD and hhmmssSSS: compared in that order, as the texts compare. */
  date: number;
  clock: number;
  /** DECISION, APPROVAL, RESULT or OTHER. */
  type: number;
  /** ALLOWED, ASK or DENIED for a decision or an approval, else 0. */
  outcome: number;
  /** An approval's or a result's decision seq, else 0. */
  decision: number;
  /** An approval answered "approved". */
  approved: boolean;
}

/** A CompactLine to fill. */
export function compactLine(): CompactLine {
  return {
    bytes: 0,
    hasNewline: true,
    digests: NO_BYTES,
    digestAt: 0,
    content: NO_BYTES,
    prevAt: 0,
    prevIsLast: false,
    seq: 0,
    date: 0,
    clock: 0,
    type: OTHER,
    outcome: 0,
    decision: 0,
    approved: false,
  };
}

/** No bytes: what a line given as text holds where a compact line holds its digests. */
export const NO_BYTES = new Uint8Array(0);

/**
 * A line held by the machine. Two are reused in turn (the line held back and the next one), so
 * that a line costs no allocation; what the report keeps of a line is copied out of it.
 */
export class Line {
  file = "";
  no = 0;
  /** The line's place among all lines fed, from 0. */
  index = 0;
  bytes = 0;
  hasNewline = false;
  /** The hash as hex, or null until it is needed: then made from the digest. */
  hash: string | null = null;
  digests: Uint8Array = NO_BYTES;
  digestAt = 0;
  isRecord = false;
  /** The parsed record of a line given by `line` (a Recovery or AcceptedBreak is only so). */
  record: AuditRecord | null = null;
  error: string | null = null;
  seq = 0;
  date = 0;
  clock = 0;
  type = OTHER;
  outcome = 0;
  decision = 0;
  approved = false;
  /** The prev as hex, or null until it is needed: then read from the content. */
  prev: string | null = null;
  content: Uint8Array = NO_BYTES;
  prevAt = 0;
  prevIsLast = false;
  /** A Recovery record that recovered the line before it. */
  recovering = false;

  /** Takes a line given with its record (or why it is not one) and its hash as hex. */
  setInput(input: LineInput): void {
    this.bytes = input.bytes;
    this.hasNewline = input.hasNewline;
    this.hash = input.hash;
    this.digests = NO_BYTES;
    this.record = input.record;
    this.error = input.error;
    this.prevIsLast = false;
    const record = input.record;
    this.isRecord = record !== null;
    if (record !== null) {
      this.seq = record.seq;
      this.prev = record.prev;
      // The schema's time is 24 ASCII characters, dddd-dd-ddTdd:dd:dd.dddZ.
      const time = timeBytes(record.time) as Uint8Array;
      this.date = isoDate(time, 0);
      this.clock = isoClock(time, 0);
      const event = record.event;
      this.outcome = 0;
      this.decision = 0;
      this.approved = false;
      if (event.type === "decision") {
        this.type = DECISION;
        this.outcome = outcomeCode(event.outcome.outcome);
      } else if (event.type === "approval") {
        this.type = APPROVAL;
        this.outcome = outcomeCode(event.outcome.outcome);
        this.decision = event.decision;
        this.approved = event.answer === "approved";
      } else if (event.type === "result") {
        this.type = RESULT;
        this.decision = event.decision;
      } else if (event.type === "recovery") {
        this.type = RECOVERY;
      } else if (event.type === "accepted_break") {
        this.type = BREAK;
      } else {
        this.type = OTHER;
      }
    } else {
      this.prev = null;
      this.type = OTHER;
    }
  }

  /** Takes a line as the compact scanner read it. */
  setCompact(input: CompactLine): void {
    this.bytes = input.bytes;
    this.hasNewline = input.hasNewline;
    this.hash = null;
    this.digests = input.digests;
    this.digestAt = input.digestAt;
    this.isRecord = true;
    this.record = null;
    this.error = null;
    this.seq = input.seq;
    this.date = input.date;
    this.clock = input.clock;
    this.type = input.type;
    this.outcome = input.outcome;
    this.decision = input.decision;
    this.approved = input.approved;
    this.prev = null;
    this.content = input.content;
    this.prevAt = input.prevAt;
    this.prevIsLast = input.prevIsLast;
  }
}

/** The line's hash as hex, made from its digest the first time it is needed. */
export function hashOf(line: Line): string {
  line.hash ??= hexOf(line.digests, line.digestAt);
  return line.hash;
}

/** The line's prev as hex, read from its content the first time it is needed. */
export function prevOf(line: Line): string {
  if (line.prev === null) {
    let prev = "";
    for (let i = line.prevAt; i < line.prevAt + 64; i++) {
      prev += String.fromCharCode(line.content[i]);
    }
    line.prev = prev;
  }
  return line.prev;
}

/** The 32 bytes at `at` as 64 lowercase hex digits. */
export function hexOf(digests: Uint8Array, at: number): string {
  let hex = "";
  for (let i = at; i < at + 32; i++) hex += HEX_PAIRS[digests[i]];
  return hex;
}

const HEX_PAIRS = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

function outcomeCode(outcome: "allowed" | "ask" | "denied"): number {
  return outcome === "allowed" ? ALLOWED : outcome === "ask" ? ASK : DENIED;
}

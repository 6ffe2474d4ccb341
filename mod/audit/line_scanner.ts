/**
 * The verifier's fast path for a line written exactly as the writer writes it: a one-pass scanner
 * over the line's bytes that gives the record JSON.parse would give, for ASCII text, and only for
 * a line whose value record_check.ts's isCanonicalRecord accepts; any other line is left to
 * JSON.parse, the check and zod. tests/audit/line_scanner_test.ts proves the agreement.
 */
import type { AuditRecord } from "./records.ts";
import { ANSWERS, EVENT_KEYS, type Fields, REASON, STATUSES, TAINTS } from "./record_check.ts";

/**
 * Reads the records of lines written exactly as the writer writes them (JSON.stringify of the
 * schema's output: keys in schema order, no space), in one pass over their bytes, without
 * JSON.parse. For ASCII text only, so that a byte's offset is its character's. A line's record is
 * what JSON.parse gives, and only for a line whose value isCanonicalRecord accepts; for any other
 * line (a space, a number written otherwise, a task_started event with its array) it is null, and
 * the caller parses the line the ordinary way. tests/audit/record_check_test.ts proves both with
 * fast-check. Measured on the bench's log here, warm: about 0.7 µs a line, against 1.9 µs for
 * JSON.parse and isCanonicalRecord.
 */
export class LineScanner {
  #bytes: Uint8Array;
  #text: string;
  #at = 0;
  /** The values of the event being read, after its type. */
  #values: unknown[] = new Array(12);

  /** A scanner of ASCII content: its bytes, and the same decoded (one character a byte). */
  constructor(bytes: Uint8Array, text: string) {
    this.#bytes = bytes;
    this.#text = text;
  }

  /** The record of the line from `start` to `end` (its newline excluded), or null. */
  record(start: number, end: number): AuditRecord | null {
    this.#at = start;
    if (!this.#literal(RECORD_START)) return null;
    const seq = this.#seq(end);
    if (seq < 0 || !this.#literal(TIME_KEY)) return null;
    const timeStart = this.#at + 1;
    const time = this.#string(end);
    if (time === null) return null;
    // Written without escapes, the time's characters are its bytes, which are checked where they are.
    const unescaped = this.#at - 1 - timeStart === time.length;
    const real = unescaped && time.length === 24
      ? isIsoTimeAt(this.#bytes, timeStart)
      : isIsoTime(time);
    if (!real || !this.#literal(PREV_KEY)) return null;
    const prev = this.#hash(end);
    if (prev === null || !this.#literal(EVENT_START)) return null;
    const type = this.#string(end);
    if (type === null || !Object.hasOwn(SCANNED_FIELDS, type)) return null;
    const fields = SCANNED_FIELDS[type];
    const values = this.#values;
    for (let i = 0; i < fields.length; i++) {
      if (!this.#literal(fields[i].prefix)) return null;
      const value = this.#value(fields[i].kind, end);
      if (value === FAIL) return null;
      values[i] = value;
    }
    if (!this.#literal(RECORD_END) || this.#at !== end) return null;
    return { seq, time, prev, event: eventOf(type, values) } as unknown as AuditRecord;
  }

  /** Whether the bytes at the position are these, and if so moves past them. */
  #literal(expected: Uint8Array): boolean {
    const bytes = this.#bytes;
    const at = this.#at;
    if (at + expected.length > bytes.length) return false;
    for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
    this.#at = at + expected.length;
    return true;
  }

  #value(kind: Kind, end: number): unknown {
    switch (kind) {
      case "text":
      case "string": {
        const value = this.#string(end);
        return value === null || (kind === "text" && value.length === 0) ? FAIL : value;
      }
      case "textOrNull":
      case "stringOrNull": {
        if (this.#literal(NULL)) return null;
        const value = this.#string(end);
        return value === null || (kind === "textOrNull" && value.length === 0) ? FAIL : value;
      }
      case "hash":
        return this.#hash(end) ?? FAIL;
      case "hashOrNull":
        return this.#literal(NULL) ? null : this.#hash(end) ?? FAIL;
      case "seq":
      case "line": {
        const value = this.#seq(end);
        return value < 0 || (kind === "line" && value === 0) ? FAIL : value;
      }
      case "bool":
        return this.#literal(TRUE) ? true : this.#literal(FALSE) ? false : FAIL;
      case "taint":
        return this.#oneOf(TAINTS, end);
      case "answer":
        return this.#oneOf(ANSWERS, end);
      case "status":
        return this.#oneOf(STATUSES, end);
      case "outcome":
        return this.#outcome(end);
    }
  }

  #oneOf(allowed: readonly string[], end: number): string | typeof FAIL {
    const value = this.#string(end);
    return value !== null && allowed.includes(value) ? value : FAIL;
  }

  #outcome(end: number): Fields | typeof FAIL {
    if (this.#literal(ALLOWED)) return { outcome: "allowed" };
    if (this.#literal(ASK)) return { outcome: "ask" };
    if (!this.#literal(DENIED)) return FAIL;
    const reason = this.#string(end);
    if (reason === null || !REASON.test(reason) || !this.#literal(OBJECT_END)) return FAIL;
    return { outcome: "denied", reason };
  }

  /**
   * A JSON string: its characters as they are when it holds no backslash; with one, JSON.parse
   * of the string alone says what it holds. Null if it is not a JSON string.
   */
  #string(end: number): string | null {
    const bytes = this.#bytes;
    if (this.#at >= end || bytes[this.#at] !== 34) return null;
    const start = this.#at + 1;
    let escaped = false;
    let i = start;
    while (true) {
      if (i >= end) return null;
      const byte = bytes[i];
      if (byte === 34) break;
      if (byte === 92) {
        escaped = true;
        i += 2;
      } else if (byte < 32) {
        return null;
      } else {
        i++;
      }
    }
    this.#at = i + 1;
    if (!escaped) return this.#text.slice(start, i);
    try {
      return JSON.parse(this.#text.slice(start - 1, i + 1)) as string;
    } catch {
      return null;
    }
  }

  /** A string of 64 lowercase hex digits, as isHash, written without escapes; else null. */
  #hash(end: number): string | null {
    const bytes = this.#bytes;
    const at = this.#at;
    if (at + 66 > end || bytes[at] !== 34 || bytes[at + 65] !== 34) return null;
    for (let i = at + 1; i <= at + 64; i++) if (HEX_DIGIT[bytes[i]] === 0) return null;
    this.#at = at + 66;
    return this.#text.slice(at + 1, at + 65);
  }

  /**
   * A whole number from 0 that JavaScript holds exactly, written as JSON.stringify writes it (no
   * sign, fraction, exponent or leading zero); else -1. Below 2^53 the sum is exact, and at or
   * above it stays at or above it, so the bound is checked on the sum.
   */
  #seq(end: number): number {
    const bytes = this.#bytes;
    let at = this.#at;
    if (at >= end) return -1;
    let byte = bytes[at];
    if (byte === 48) {
      this.#at = at + 1;
      return 0;
    }
    if (!(byte >= 49 && byte <= 57)) return -1;
    let value = 0;
    let digits = 0;
    while (at < end && byte >= 48 && byte <= 57) {
      if (++digits > 16) return -1;
      value = value * 10 + (byte - 48);
      byte = bytes[++at];
    }
    this.#at = at;
    return value <= Number.MAX_SAFE_INTEGER ? value : -1;
  }
}

/**
 * The event object with its keys in schema order, as JSON.parse would build it: one object
 * literal a type (each of one shape, which a store of computed keys would not give).
 */
function eventOf(type: string, v: unknown[]): Fields {
  switch (type) {
    case "decision":
      return {
        type,
        session: v[0],
        call: v[1],
        tool: v[2],
        arguments: v[3],
        outcome: v[4],
        grant: v[5],
        grant_sha256: v[6],
        taint: v[7],
        untrusted: v[8],
      };
    case "approval":
      return {
        type,
        session: v[0],
        call: v[1],
        decision: v[2],
        answer: v[3],
        by: v[4],
        reason: v[5],
        outcome: v[6],
        grant: v[7],
        grant_sha256: v[8],
        taint: v[9],
        untrusted: v[10],
      };
    case "result":
      return {
        type,
        session: v[0],
        call: v[1],
        decision: v[2],
        status: v[3],
        class: v[4],
        untrusted: v[5],
        truncated: v[6],
        bytes: v[7],
        sha256: v[8],
        taint_after: v[9],
      };
    case "recovery":
      return { type, torn_bytes: v[0], torn_sha256: v[1] };
    case "accepted_break":
      return { type, file: v[0], line: v[1], last_good: v[2] };
    case "task_ended":
      return { type, task: v[0], state: v[1], reason: v[2] };
    case "vault_set":
    case "vault_removed":
      return { type, name: v[0] };
    case "vault_denied":
    case "vault_allowed":
      return { type, app: v[0], name: v[1] };
    default:
      return { type, task: v[0], cents: v[1], what: v[2] };
  }
}

/** The record of one line of text by LineScanner; null for a line that is not all ASCII. */
export function scanRecordLine(line: string): AuditRecord | null {
  const bytes = new Uint8Array(line.length);
  for (let i = 0; i < line.length; i++) {
    const code = line.charCodeAt(i);
    if (code > 127) return null;
    bytes[i] = code;
  }
  return new LineScanner(bytes, line).record(0, line.length);
}

/** How a field's value is written and what isEvent requires of it. */
export type Kind =
  | "text"
  | "string"
  | "textOrNull"
  | "stringOrNull"
  | "hash"
  | "hashOrNull"
  | "seq"
  | "line"
  | "bool"
  | "taint"
  | "answer"
  | "status"
  | "outcome";

/** The kind of each field of EVENT_KEYS, in schema order (task_started, with its array, is not). */
export const FIELD_KINDS: Record<string, Kind[]> = {
  decision: [
    "text",
    "text",
    "text",
    "string",
    "outcome",
    "textOrNull",
    "hashOrNull",
    "taint",
    "bool",
  ],
  approval: [
    "text",
    "text",
    "seq",
    "answer",
    "textOrNull",
    "stringOrNull",
    "outcome",
    "textOrNull",
    "hashOrNull",
    "taint",
    "bool",
  ],
  result: ["text", "text", "seq", "status", "taint", "bool", "bool", "seq", "hash", "taint"],
  recovery: ["seq", "hash"],
  accepted_break: ["text", "line", "hash"],
  task_ended: ["text", "text", "stringOrNull"],
  vault_set: ["text"],
  vault_removed: ["text"],
  vault_denied: ["text", "text"],
  vault_allowed: ["text", "text"],
  cost: ["text", "seq", "text"],
};

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Each scanned event type's fields after `type`: the text before the value, the key, the kind. */
const SCANNED_FIELDS: Record<string, { prefix: Uint8Array; key: string; kind: Kind }[]> = {};
for (const [type, kinds] of Object.entries(FIELD_KINDS)) {
  SCANNED_FIELDS[type] = kinds.map((kind, i) => {
    const key = EVENT_KEYS[type][i + 1];
    return { prefix: ascii(`,${JSON.stringify(key)}:`), key, kind };
  });
}

const RECORD_START = ascii('{"seq":');
const TIME_KEY = ascii(',"time":');
const PREV_KEY = ascii(',"prev":');
const EVENT_START = ascii(',"event":{"type":');
const RECORD_END = ascii("}}");
const OBJECT_END = ascii("}");
const NULL = ascii("null");
const TRUE = ascii("true");
const FALSE = ascii("false");
const ALLOWED = ascii('{"outcome":"allowed"}');
const ASK = ascii('{"outcome":"ask"}');
const DENIED = ascii('{"outcome":"denied","reason":');

/** 1 for the bytes of 0-9 and a-f, else 0. */
const HEX_DIGIT = new Uint8Array(256);
for (const digit of ascii("0123456789abcdef")) HEX_DIGIT[digit] = 1;

/** What a scan of a value returns when the text is not that value written canonically. */
const FAIL = Symbol("not written canonically");

const utf8 = new TextDecoder("utf-8");

/** The content as text if it is all ASCII, else null. */
export function asciiText(content: Uint8Array): string | null {
  // ASCII is valid UTF-8 that decodes to one character a byte, so a decoder that is not fatal
  // replaces nothing here; checking 4 bytes at a time and decoding is 5 times a fatal decode.
  return isAscii(content) ? utf8.decode(content) : null;
}

/** Whether every byte is below 128. */
function isAscii(content: Uint8Array): boolean {
  let i = 0;
  // Up to the first 4-byte boundary of the buffer, then whole words, then the bytes left.
  while (i < content.length && (content.byteOffset + i) % 4 !== 0) {
    if (content[i] > 127) return false;
    i++;
  }
  // Content shorter than the way to that boundary has no word (a view there would not be aligned).
  if (i === content.length) return true;
  const words = new Uint32Array(content.buffer, content.byteOffset + i, (content.length - i) >> 2);
  for (let w = 0; w < words.length; w++) if ((words[w] & 0x80808080) !== 0) return false;
  for (i += words.length * 4; i < content.length; i++) if (content[i] > 127) return false;
  return true;
}

/**
 * What isTime says of a string, without the regex or Date.parse, which are a third of the line
 * scanner's time: 24 characters as Date.prototype.toISOString writes them, that V8's Date.parse
 * takes for a real time. Its ES5 date-time parser takes any year 0000-9999, a month 01-12 and a
 * day 01-31 (February 31 is March 3, not an error), an hour 00-23 with minutes and seconds 00-59,
 * and 24:00:00.000. tests/audit/record_check_test.ts compares the two on every month and day and
 * every hour, minute and second.
 */
export function isIsoTime(text: string): boolean {
  if (text.length !== 24) return false;
  const bytes = new Uint8Array(24);
  for (let i = 0; i < 24; i++) {
    const code = text.charCodeAt(i);
    if (code > 127) return false;
    bytes[i] = code;
  }
  return isIsoTimeAt(bytes, 0);
}

/** isIsoTime of the 24 ASCII bytes from `at`. */
export function isIsoTimeAt(bytes: Uint8Array, at: number): boolean {
  for (let i = 0; i < 24; i++) {
    const byte = bytes[at + i];
    const expected = ISO_SHAPE[i];
    if (expected === DIGIT ? byte < 48 || byte > 57 : byte !== expected) return false;
  }
  const month = twoDigits(bytes, at + 5);
  const day = twoDigits(bytes, at + 8);
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  const hour = twoDigits(bytes, at + 11);
  const minute = twoDigits(bytes, at + 14);
  const second = twoDigits(bytes, at + 17);
  if (hour <= 23) return minute <= 59 && second <= 59;
  const millisecond = twoDigits(bytes, at + 20) * 10 + bytes[at + 22] - 48;
  return hour === 24 && minute === 0 && second === 0 && millisecond === 0;
}

/** The shape of an ISO time: DIGIT for a digit, any other byte itself. */
const ISO_SHAPE = ascii("dddd-dd-ddTdd:dd:dd.dddZ");
const DIGIT = 100;

function twoDigits(bytes: Uint8Array, at: number): number {
  return (bytes[at] - 48) * 10 + bytes[at + 1] - 48;
}

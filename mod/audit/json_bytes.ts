/**
 * Reading JSON where it lies in bytes, without decoding it: the one place the audit verifier reads
 * JSON tokens, whole numbers, hex digits and ISO times from bytes. The compact scanner reads record
 * lines with a JsonCursor; record_check.ts checks a time with isIsoTime; the chain verifier decodes
 * a file once with asciiText. It imports nothing.
 */

/** A position in bytes of ASCII JSON text, read token by token; each read moves past what it read. */
export class JsonCursor {
  /** The bytes read. */
  bytes: Uint8Array = new Uint8Array(0);
  /** Where the next read starts. */
  at = 0;

  /** Whether the bytes at the position are these, and if so moves past them. */
  literal(expected: Uint8Array): boolean {
    const bytes = this.bytes;
    const at = this.at;
    if (at + expected.length > bytes.length) return false;
    for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
    this.at = at + expected.length;
    return true;
  }

  /** The index of the first of these literals at the position (moving past it); else -1. */
  oneOf(values: readonly Uint8Array[]): number {
    for (let i = 0; i < values.length; i++) if (this.literal(values[i])) return i;
    return -1;
  }

  /**
   * Whether a JSON string of ASCII ends before `end` at the position (non-empty if asked), which
   * JSON.parse reads: no control character, and each escape one JSON has. Moves past it.
   */
  string(end: number, nonEmpty: boolean): boolean {
    const bytes = this.bytes;
    const start = this.at;
    if (start >= end || bytes[start] !== QUOTE) return false;
    let i = start + 1;
    while (true) {
      if (i >= end) return false;
      const byte = bytes[i];
      if (byte === QUOTE) break;
      if (byte === BACKSLASH) {
        if (i + 1 >= end) return false;
        const escape = bytes[i + 1];
        if (escape === U) {
          if (i + 6 > end) return false;
          for (let k = i + 2; k < i + 6; k++) if (ANY_HEX_DIGIT[bytes[k]] === 0) return false;
          i += 6;
        } else if (SIMPLE_ESCAPE[escape] === 1) {
          i += 2;
        } else {
          return false;
        }
      } else if (byte < 32 || byte > 127) {
        return false;
      } else {
        i++;
      }
    }
    if (nonEmpty && i === start + 1) return false;
    this.at = i + 1;
    return true;
  }

  /** Whether a string of 64 lowercase hex digits, written without escapes, is at the position. */
  hash(end: number): boolean {
    const bytes = this.bytes;
    const at = this.at;
    if (at + 66 > end || bytes[at] !== QUOTE || bytes[at + 65] !== QUOTE) return false;
    for (let i = at + 1; i <= at + 64; i++) if (HEX_VALUE[bytes[i]] === NOT_HEX) return false;
    this.at = at + 66;
    return true;
  }

  /**
   * A whole number from 0 that JavaScript holds exactly, written as JSON.stringify writes it (no
   * sign, fraction, exponent or leading zero); else -1. Below 2^53 the sum is exact, and at or
   * above it stays at or above it, so the bound is checked on the sum.
   */
  wholeNumber(end: number): number {
    const bytes = this.bytes;
    let at = this.at;
    if (at >= end) return -1;
    let byte = bytes[at];
    if (byte === ZERO) {
      this.at = at + 1;
      return 0;
    }
    if (!(byte > ZERO && byte <= NINE)) return -1;
    let value = 0;
    let digits = 0;
    while (at < end && byte >= ZERO && byte <= NINE) {
      if (++digits > 16) return -1;
      value = value * 10 + (byte - ZERO);
      byte = bytes[++at];
    }
    this.at = at;
    return value <= Number.MAX_SAFE_INTEGER ? value : -1;
  }
}

/** Text as its ASCII bytes (for literals a cursor compares). */
export function asciiBytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

const QUOTE = 34;
const BACKSLASH = 92;
const U = 117;
const ZERO = 48;
const NINE = 57;

/** HEX_VALUE of a byte that is not a lowercase hex digit. */
export const NOT_HEX = 255;
/** The value of a lowercase hex digit's byte, else NOT_HEX. */
export const HEX_VALUE = new Uint8Array(256).fill(NOT_HEX);
for (let i = 0; i < 16; i++) HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;
/** 1 for the bytes of a hex digit of either case, as a \u escape takes them. */
const ANY_HEX_DIGIT = new Uint8Array(256);
for (const byte of asciiBytes("0123456789abcdefABCDEF")) ANY_HEX_DIGIT[byte] = 1;
/** 1 for the bytes after a backslash that JSON takes, besides u. */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const byte of asciiBytes('"\\/bfnrt')) SIMPLE_ESCAPE[byte] = 1;

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
 * What the schema's time check (records.ts's isoTime: a regex, then Date.parse) says of a string,
 * without either: 24 characters as Date.prototype.toISOString writes them, that V8's Date.parse
 * takes for a real time. Its ES5 date-time parser takes any year 0000-9999, a month 01-12 and a
 * day 01-31 (February 31 is March 3, not an error), an hour 00-23 with minutes and seconds 00-59,
 * and 24:00:00.000. tests/audit/json_bytes_test.ts compares the two on every month and day and
 * every hour, minute and second.
 */
export function isIsoTime(text: string): boolean {
  const bytes = timeBytes(text);
  return bytes !== null && isIsoTimeAt(bytes, 0);
}

/**
 * The bytes of a time string, in a buffer the next call reuses, for isIsoTimeAt, isoDate and
 * isoClock; null unless it is 24 ASCII characters.
 */
export function timeBytes(text: string): Uint8Array | null {
  if (text.length !== 24) return null;
  for (let i = 0; i < 24; i++) {
    const code = text.charCodeAt(i);
    if (code > 127) return null;
    TIME_BYTES[i] = code;
  }
  return TIME_BYTES;
}

const TIME_BYTES = new Uint8Array(24);

/** isIsoTime of the 24 ASCII bytes from `at`. */
export function isIsoTimeAt(bytes: Uint8Array, at: number): boolean {
  for (let i = 0; i < 24; i++) {
    const byte = bytes[at + i];
    const expected = ISO_SHAPE[i];
    if (expected === DIGIT ? byte < ZERO || byte > NINE : byte !== expected) return false;
  }
  const month = twoDigits(bytes, at + 5);
  const day = twoDigits(bytes, at + 8);
  if (month < 1 || month > 12 || day < 1 || day > 31) return false;
  const hour = twoDigits(bytes, at + 11);
  const minute = twoDigits(bytes, at + 14);
  const second = twoDigits(bytes, at + 17);
  if (hour <= 23) return minute <= 59 && second <= 59;
  const millisecond = twoDigits(bytes, at + 20) * 10 + bytes[at + 22] - ZERO;
  return hour === 24 && minute === 0 && second === 0 && millisecond === 0;
}

/** The date of the ISO time at `at` (checked by isIsoTimeAt) as the number YYYYMMDD. */
export function isoDate(bytes: Uint8Array, at: number): number {
  return (bytes[at] - ZERO) * 10000000 + (bytes[at + 1] - ZERO) * 1000000 +
    (bytes[at + 2] - ZERO) * 100000 + (bytes[at + 3] - ZERO) * 10000 +
    (bytes[at + 5] - ZERO) * 1000 + (bytes[at + 6] - ZERO) * 100 +
    (bytes[at + 8] - ZERO) * 10 + (bytes[at + 9] - ZERO);
}

/** The time of day of the ISO time at `at` as the number hhmmssSSS: with isoDate, in text order. */
export function isoClock(bytes: Uint8Array, at: number): number {
  return (bytes[at + 11] - ZERO) * 100000000 + (bytes[at + 12] - ZERO) * 10000000 +
    (bytes[at + 14] - ZERO) * 1000000 + (bytes[at + 15] - ZERO) * 100000 +
    (bytes[at + 17] - ZERO) * 10000 + (bytes[at + 18] - ZERO) * 1000 +
    (bytes[at + 20] - ZERO) * 100 + (bytes[at + 21] - ZERO) * 10 + (bytes[at + 22] - ZERO);
}

/** The shape of an ISO time: DIGIT for a digit, any other byte itself. */
const ISO_SHAPE = asciiBytes("dddd-dd-ddTdd:dd:dd.dddZ");
const DIGIT = 100;

function twoDigits(bytes: Uint8Array, at: number): number {
  return (bytes[at] - ZERO) * 10 + bytes[at + 1] - ZERO;
}

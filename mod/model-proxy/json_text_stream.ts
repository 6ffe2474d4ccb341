/**
 * JSON text that a worker will parse, redacted as it arrives in pieces: a tool call's input, which
 * Anthropic streams as `partial_json` and OpenAI as `arguments`. Each string in it (keys too) is
 * decoded, escapes and all, and redacted as one continuous text; where a vault value is found, the
 * characters that spell it, escapes included, become `[a vault key]`, so the JSON stays JSON. What
 * is not a string (numbers, true, false, null, and bare words some models write) is redacted token
 * by token as it stands: a value there becomes `[a vault key]` too, and the text is no longer JSON
 * that parses to it. A number that a worker would write again as a value (1.2345678e7 is written
 * 12345678) is refused. Any other character outside a string is not JSON: the endpoint cannot know
 * what a worker would make of it, so it refuses it.
 */
import { Piece, PieceStream } from "./piece_stream.ts";
import type { TextRedaction } from "../vault/mod.ts";

/** The answer cannot be read as the wire format it should be in; says why, never with its text. */
export class AnswerUnreadable extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "AnswerUnreadable";
  }
}

/** Characters of a token outside strings: numbers, true, false, null and bare words. */
const BARE = /[A-Za-z0-9_+\-.]/;
/** A JSON number, which a worker that parses the text writes again its own way. */
const NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;
/** The longest number kept to check: a longer token of number characters is refused. */
const LONGEST_NUMBER = 400;
/** Characters outside strings that are passed on as they are. */
const STRUCTURE = " \t\n\r{}[]:,";
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};

/** Redacts one JSON text that comes in pieces (one per event). */
export class JsonTextStream {
  readonly #redaction: TextRedaction;
  #state: "outside" | "string" | "escape" | "bare" = "outside";
  /** The string being read, while inside one. */
  #string: PieceStream | null = null;
  /** The token outside strings being read, while inside one. */
  #bare: PieceStream | null = null;
  /** The token outside strings so far, while it could be a number. */
  #token: string | null = null;
  /** An escape being read, and the piece it started in. */
  #escape = "";
  #escapePiece: Piece | null = null;

  constructor(redaction: TextRedaction) {
    this.#redaction = redaction;
  }

  /** Adds the next piece of the text; throws AnswerUnreadable where it is not JSON. */
  push(piece: Piece, text: string): void {
    let i = 0;
    while (i < text.length) {
      if (this.#state === "string") {
        let j = i;
        while (j < text.length && text[j] !== '"' && text[j] !== "\\") j++;
        if (j > i) this.#string!.push(piece, text.slice(i, j));
        if (j === text.length) return;
        if (text[j] === '"') {
          this.#string!.end();
          this.#string = null;
          piece.out += '"';
          this.#state = "outside";
        } else {
          this.#escape = "\\";
          this.#escapePiece = piece;
          piece.pending++;
          this.#state = "escape";
        }
        i = j + 1;
      } else if (this.#state === "escape") {
        this.#escape += text[i++];
        const decoded = decodeEscape(this.#escape);
        if (decoded !== null) {
          this.#string!.push(this.#escapePiece!, decoded, this.#escape);
          this.#release();
          this.#state = "string";
        }
      } else if (this.#state === "bare") {
        let j = i;
        while (j < text.length && BARE.test(text[j])) j++;
        this.#bare!.push(piece, text.slice(i, j));
        this.#keepToken(text.slice(i, j));
        i = j;
        if (j < text.length) this.#endBare();
      } else {
        const c = text[i];
        if (c === '"') {
          piece.out += c;
          this.#string = new PieceStream(this.#redaction);
          this.#state = "string";
          i++;
        } else if (STRUCTURE.includes(c)) {
          piece.out += c;
          i++;
        } else if (BARE.test(c)) {
          this.#bare = new PieceStream(this.#redaction);
          this.#token = "";
          this.#state = "bare";
        } else {
          throw new AnswerUnreadable(
            "a tool call's input has a character outside its strings that JSON does not allow",
          );
        }
      }
    }
  }

  /**
   * Ends the text. A text cut off inside a string (a model stopped at its token limit) is passed on
   * as far as it goes, redacted; an escape cut off is passed on as the characters it has.
   */
  end(): void {
    if (this.#state === "bare") this.#endBare();
    if (this.#state === "escape") {
      this.#string!.push(this.#escapePiece!, this.#escape);
      this.#release();
    }
    this.#string?.end();
    this.#string = null;
    this.#state = "outside";
  }

  #release(): void {
    this.#escapePiece!.pending--;
    this.#escapePiece = null;
    this.#escape = "";
  }

  /** Keeps the token's text while it could be a number; refuses a number too long to keep. */
  #keepToken(text: string): void {
    if (this.#token === null) return;
    this.#token += text;
    if (!/^[-+.0-9eE]*$/.test(this.#token)) this.#token = null;
    else if (this.#token.length > LONGEST_NUMBER) {
      throw new AnswerUnreadable(
        `a tool call's input has a number of more than ${LONGEST_NUMBER} characters`,
      );
    }
  }

  #endBare(): void {
    // 1.2345678e7 holds no value as written, but a worker that parses it writes 12345678.
    if (this.#token !== null && NUMBER.test(this.#token)) {
      checkNumber(Number(this.#token), this.#redaction);
    }
    this.#token = null;
    this.#bare!.end();
    this.#bare = null;
    this.#state = "outside";
  }
}

/** The character an escape stands for; null while it is incomplete; throws if it is not one. */
function decodeEscape(escape: string): string | null {
  const kind = escape[1];
  if (kind !== "u") {
    if (kind in ESCAPES) return ESCAPES[kind];
    throw new AnswerUnreadable("a tool call's input has an escape that JSON does not allow");
  }
  if (!/^[0-9a-fA-F]*$/.test(escape.slice(2))) {
    throw new AnswerUnreadable("a tool call's input has a \\u escape that is not four hex digits");
  }
  return escape.length < 6 ? null : String.fromCharCode(parseInt(escape.slice(2), 16));
}

/**
 * `text`, a JSON text held whole in a string (OpenAI's `arguments`), with the strings inside it
 * redacted as decoded; null when it is not JSON the stream can read.
 */
export function redactJsonText(text: string, redaction: TextRedaction): string | null {
  const piece = new Piece(text);
  const stream = new JsonTextStream(redaction);
  try {
    stream.push(piece, text);
    stream.end();
  } catch (error) {
    if (error instanceof AnswerUnreadable && !(error instanceof ValueInNumber)) return null;
    throw error;
  }
  return piece.out;
}

/**
 * A string of an answer that is not part of a stream, redacted whole: as it is, and, when it can be
 * read as JSON text (a tool call's arguments, a top-level JSON string among them), with the
 * strings inside it decoded first.
 */
export function redactString(text: string, redaction: TextRedaction): string {
  // Read as JSON only where that can differ from the text as it is: a string in it (escapes), or a
  // number a parser writes another way (a fraction, an exponent, more digits than a double keeps).
  // Bare words and structure read as themselves.
  const decodable = text.includes('"') || /[0-9][.eE]|[0-9]{16}/.test(text);
  return redaction.redact((decodable ? redactJsonText(text, redaction) : null) ?? text);
}

/**
 * Redacts every string in a parsed JSON value in place, keys included; returns whether anything
 * changed. A number that a worker would write as a value (1.2345678e7 is written 12345678) cannot
 * be replaced: it throws AnswerUnreadable. The rest is left to the caller's check of the text.
 */
export function redactInPlace(value: unknown, redaction: TextRedaction): boolean {
  if (typeof value !== "object" || value === null) return false;
  let changed = false;
  const fields = value as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    const item = fields[key];
    let out = item;
    if (typeof item === "string") out = redactString(item, redaction);
    else if (typeof item === "number") checkNumber(item, redaction);
    else if (redactInPlace(item, redaction)) changed = true;
    const name = Array.isArray(value) ? key : redactString(key, redaction);
    if (name === key && out === item) continue;
    changed = true;
    if (name !== key) delete fields[key];
    // Defined, not assigned: a key such as __proto__ stays a plain field.
    Object.defineProperty(fields, name, {
      value: out,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return changed;
}

/** A number that spells a vault value: refused whatever reads it, never read another way. */
class ValueInNumber extends AnswerUnreadable {}

/** Throws AnswerUnreadable when `value`, written as JSON writes it, holds a vault value. */
function checkNumber(value: number, redaction: TextRedaction): void {
  const written = JSON.stringify(value);
  if (redaction.redact(written) !== written) {
    throw new ValueInNumber("a number spells a vault value");
  }
}

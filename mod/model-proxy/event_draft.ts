/**
 * One event of a streamed model answer, as the stream redactors read it (Draft: the texts it carries
 * as pieces of their streams, and how to write it back), the face each wire format's reader has
 * (AnswerFormat), and the checks every reader makes of an event's JSON.
 */
import { AnswerUnreadable, redactInPlace } from "./json_text_stream.ts";
import { Piece, type PieceStream } from "./piece_stream.ts";
import type { TextRedaction } from "../vault/mod.ts";
import type { ToolInputStream } from "./tool_input_stream.ts";

/** An event's JSON object. */
export type Fields = Record<string, unknown>;

/** One event's data, read: the pieces it carries and how to write it back. */
export class Draft {
  readonly pieces: Piece[] = [];
  readonly #slots: { holder: Fields; key: string; piece: Piece }[] = [];
  #changed = false;

  constructor(readonly original: string, readonly value: Fields | null) {}

  /** Adds `holder[key]`, a string, to `stream` as a piece of this event. */
  slot(stream: PieceStream | ToolInputStream, holder: Fields, key: string): void {
    const piece = new Piece(holder[key] as string);
    this.pieces.push(piece);
    this.#slots.push({ holder, key, piece });
    stream.push(piece, piece.original);
  }

  /** Notes that the event's value was changed, so it is written again. */
  rewritten(): void {
    this.#changed = true;
  }

  /** Redacts every other string of the event whole (the pieces' fields are written over later). */
  redactRest(redaction: TextRedaction): void {
    if (this.value !== null && redactInPlace(this.value, redaction)) this.#changed = true;
  }

  /** Whether every piece has been decided, so the event can go. */
  get ready(): boolean {
    return this.pieces.every((piece) => piece.ready);
  }

  /** The data to send: the original text when nothing in it changed. */
  data(): string {
    let changed = this.#changed;
    for (const { holder, key, piece } of this.#slots) {
      holder[key] = piece.out;
      if (piece.out !== piece.original) changed = true;
    }
    return changed ? JSON.stringify(this.value) : this.original;
  }
}

/** A wire format's reading of a streamed answer, event by event. */
export interface AnswerFormat {
  /** Its name in messages. */
  readonly name: string;
  /** Reads one event's data; throws AnswerUnreadable when it cannot. */
  read(data: string): Draft;
  /** The answer has ended: every text still open is decided. */
  end(): void;
  /** The event that ends an answer the endpoint cut off, in this format's error shape. */
  cutEvent(message: string): string;
}

/** An event's data as a JSON object; throws AnswerUnreadable when it is not one. */
export function parseObject(data: string): Fields {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new AnswerUnreadable("an event's data is not JSON");
  }
  if (!isObject(value)) throw new AnswerUnreadable("an event's data is not a JSON object");
  return value;
}

/** Whether `value` is a JSON object. */
export function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether `value` is an index: a safe integer, 0 or more. */
export function isIndex(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** True when `holder[key]` is a string; throws when it is not (a delta of its type must have it). */
export function mustBeString(holder: Fields, field: { key: string; what: string }): true {
  const { key, what } = field;
  if (typeof holder[key] === "string") return true;
  throw new AnswerUnreadable(`${what} has no string ${key}`);
}

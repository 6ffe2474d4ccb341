/**
 * One continuous text of a model answer (a block's text, a choice's content), redacted as it
 * arrives in pieces, one piece per event that carries part of it. A piece's redacted text is
 * written into the piece itself; a piece is ready once nothing of it is held back any more. A vault
 * value that straddles pieces becomes one `[a vault key]` in the piece where it starts, and the
 * pieces it runs on into lose their part of it, so the text a worker joins is the whole text
 * redacted, and every event keeps its place.
 */
import type { Span, SpanStream, TextRedaction } from "../vault/mod.ts";

/** The part of one event's string that belongs to a stream, and what the worker gets instead. */
export class Piece {
  /** The redacted text, filled in as the stream decides it. */
  out = "";
  /** How many held runs (or held escapes) of this piece the stream still has. */
  pending = 0;

  constructor(readonly original: string) {}

  /** Whether the stream has decided all of this piece. */
  get ready(): boolean {
    return this.pending === 0;
  }
}

/** Text held back, with the piece it came in and how it is written there. */
interface Held {
  piece: Piece;
  /** The decoded text, the part the redactor sees. */
  text: string;
  /** How the text is written in the piece; null when as it is (it may then be cut anywhere). */
  raw: string | null;
  /** How much of `text` has been decided. */
  at: number;
}

/** Redacts one continuous text that comes in pieces. */
export class PieceStream {
  readonly #redactor: SpanStream;
  readonly #marker: string;
  readonly #held: Held[] = [];

  constructor(redaction: TextRedaction) {
    this.#redactor = redaction.stream();
    this.#marker = redaction.marker;
  }

  /**
   * Adds `text` from `piece`. `raw` is how the piece writes it (a JSON escape for one decoded
   * character), passed on whole or not at all; without it the text is written as it is.
   */
  push(piece: Piece, text: string, raw: string | null = null): void {
    if (text === "") return;
    piece.pending++;
    this.#held.push({ piece, text, raw, at: 0 });
    this.#apply(this.#redactor.spans(text));
  }

  /** Ends the text: everything held is decided and written into its piece. */
  end(): void {
    this.#apply(this.#redactor.endSpans());
  }

  #apply(spans: Span[]): void {
    for (const span of spans) {
      if (span.secret) this.#held[0].piece.out += this.#marker;
      let left = span.length;
      while (left > 0) {
        const held = this.#held[0];
        const take = Math.min(left, held.text.length - held.at);
        if (!span.secret && held.raw === null) {
          held.piece.out += held.text.slice(held.at, held.at + take);
        } else if (!span.secret && held.at === 0) {
          held.piece.out += held.raw ?? ""; // an escape's one character: decided whole
        }
        held.at += take;
        left -= take;
        if (held.at === held.text.length) {
          this.#held.shift();
          held.piece.pending--;
        }
      }
    }
  }
}

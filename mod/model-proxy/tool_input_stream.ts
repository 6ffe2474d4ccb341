/**
 * A tool call's input as it streams in (Anthropic's `partial_json`, OpenAI's `arguments`), redacted
 * for both ways a worker may read it. A worker parses the joined text as JSON, so the strings in it
 * are redacted decoded (JsonTextStream); a worker that cannot parse it keeps the text as it is
 * (gurt's worker as `{unparsed}`), so the joined text that comes out of that is redacted once more
 * as one plain text (PieceStream), which catches a value spelled over what JSON does not join: bare
 * words, spaces and quotes between them. Both hold back only what could still start a value.
 */
import { JsonTextStream } from "./json_text_stream.ts";
import { Piece, PieceStream } from "./piece_stream.ts";
import type { TextRedaction } from "../vault/mod.ts";

/** One event's piece: the JSON stream writes `inner`, the plain stream writes `outer`. */
interface Link {
  inner: Piece;
  outer: Piece;
  /** How much of `inner.out` the plain stream has taken. */
  taken: number;
}

/** Redacts one tool call's input that comes in pieces (one per event). */
export class ToolInputStream {
  readonly #json: JsonTextStream;
  readonly #plain: PieceStream;
  /** The pieces whose JSON redaction is not all decided, or not all passed to the plain stream. */
  readonly #links: Link[] = [];

  constructor(redaction: TextRedaction) {
    this.#json = new JsonTextStream(redaction);
    this.#plain = new PieceStream(redaction);
  }

  /** Adds the next piece of the input; throws AnswerUnreadable where it is not JSON text. */
  push(piece: Piece, text: string): void {
    const inner = new Piece(text);
    // The piece waits for its JSON redaction too, until that is decided and passed on.
    piece.pending++;
    this.#links.push({ inner, outer: piece, taken: 0 });
    this.#json.push(inner, text);
    this.#forward();
  }

  /** Ends the input: everything held is decided and written into its piece. */
  end(): void {
    this.#json.end();
    this.#forward();
    this.#plain.end();
  }

  /**
   * Passes what the JSON stream has decided on to the plain stream, in order. The JSON stream
   * decides its text in order (a piece's text is written only once every piece before it is
   * decided), so the pieces' outputs joined in order grow only at their end.
   */
  #forward(): void {
    while (this.#links.length > 0) {
      const link = this.#links[0];
      if (link.inner.out.length > link.taken) {
        this.#plain.push(link.outer, link.inner.out.slice(link.taken));
        link.taken = link.inner.out.length;
      }
      if (!link.inner.ready) return;
      this.#links.shift();
      link.outer.pending--;
    }
  }
}

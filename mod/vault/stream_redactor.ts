/**
 * Redaction of a streamed text: a secret split across two chunks is still caught. The redactor holds
 * back only what could still become a secret (a tail that is the start of some form, at most the
 * longest form minus one character), and what it emits is exactly what redacting the whole text at
 * once would give (a property test proves it).
 */
import { Buffer } from "node:buffer";
import { REDACTED, type Redactor } from "./redactor.ts";

/** A run of a stream's text, now decided: passed on as it is, or replaced by REDACTED as a whole. */
export interface Span {
  /** Its length in the text pushed (UTF-16 code units). */
  length: number;
  secret: boolean;
}

/** Redacts a text that arrives in chunks. Call `push` for each chunk and `flush` at the end. */
export class StreamRedactor {
  #held = "";

  constructor(readonly redactor: Redactor) {}

  /** Takes the next chunk; returns the redacted text that is now safe to pass on. */
  push(chunk: string): string {
    const text = this.#held + chunk;
    return render(text, this.spans(chunk));
  }

  /** Ends the stream: the held text, redacted. */
  flush(): string {
    const text = this.#held;
    return render(text, this.endSpans());
  }

  /**
   * Takes the next chunk; returns the runs of the held text and the chunk that are now decided, in
   * order, for a caller that keeps the text itself (the model endpoint maps them onto its events).
   */
  spans(chunk: string): Span[] {
    return this.#decide(this.#held + chunk, false);
  }

  /** Ends the stream: the runs of the held text, all decided. */
  endSpans(): Span[] {
    return this.#decide(this.#held, true);
  }

  #decide(text: string, end: boolean): Span[] {
    // Every match that starts before the held point is decided by text already here (nothing more
    // could make a longer one start there); one that straddles the point moves it to its end, so no
    // secret is ever split between decided and held text.
    let held = end ? text.length : this.redactor.heldFrom(text, 0);
    const spans: Span[] = [];
    let from = 0;
    for (const [start, stop] of this.redactor.matches(text)) {
      if (start >= held) break;
      if (start > from) spans.push({ length: start - from, secret: false });
      spans.push({ length: stop - start, secret: true });
      from = stop;
      if (stop > held) held = end ? text.length : this.redactor.heldFrom(text, stop);
    }
    if (held > from) spans.push({ length: held - from, secret: false });
    this.#held = text.slice(Math.max(from, held));
    return spans;
  }
}

/** The text the spans of `text` stand for: each secret as REDACTED. */
function render(text: string, spans: Span[]): string {
  let out = "";
  let at = 0;
  for (const span of spans) {
    out += span.secret ? REDACTED : text.slice(at, at + span.length);
    at += span.length;
  }
  return out;
}

/** A TransformStream of text chunks that redacts across chunk boundaries. */
export function redactingStream(redactor: Redactor): TransformStream<string, string> {
  const stream = new StreamRedactor(redactor);
  return new TransformStream<string, string>({
    transform(chunk, controller) {
      const out = stream.push(chunk);
      if (out !== "") controller.enqueue(out);
    },
    flush(controller) {
      const out = stream.flush();
      if (out !== "") controller.enqueue(out);
    },
  });
}

/** A TransformStream of UTF-8 bytes that redacts across chunk (and character) boundaries. */
export function redactingByteStream(redactor: Redactor): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const stream = new StreamRedactor(redactor);
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      const out = stream.push(decoder.decode(chunk, { stream: true }));
      if (out !== "") controller.enqueue(encoder.encode(out));
    },
    flush(controller) {
      const out = stream.push(decoder.decode()) + stream.flush();
      if (out !== "") controller.enqueue(encoder.encode(out));
    },
  });
}

/** A streaming redactor of one text, as a caller that keeps the text itself uses it. */
export interface SpanStream {
  /** Takes the next chunk; returns the runs of text now decided, in order. */
  spans(chunk: string): Span[];
  /** Ends the text: the runs of what was held, all decided. */
  endSpans(): Span[];
}

/** The vault's redaction as the model endpoint applies it to an answer's texts. */
export interface TextRedaction {
  /** What a vault value is replaced by. */
  readonly marker: string;
  /** `text` with every form of every vault value replaced. */
  redact(text: string): string;
  /** A fresh redactor for one text that arrives in chunks. */
  stream(): SpanStream;
}

/** The redaction the model endpoint applies to answers: this redactor, and streams of it. */
export function answerRedaction(redactor: Redactor): TextRedaction {
  return {
    marker: REDACTED,
    redact: (text) => redactor.redact(text),
    stream: () => new StreamRedactor(redactor),
  };
}

/**
 * A TransformStream of any bytes (a git pack, an image, text in any charset) that redacts every
 * vault value spelled in ASCII across chunk boundaries and leaves every other byte as it was: the
 * bytes are read as ISO-8859-1, one character each, so nothing is decoded or re-encoded. (A value
 * with characters outside ASCII is matched only where its UTF-8 spelling reads the same, which
 * for such a value it does not: vault keys and tokens are ASCII.)
 */
export function redactingExactBytes(
  redaction: TextRedaction,
): TransformStream<Uint8Array, Uint8Array> {
  const stream = redaction.stream();
  const marker = Buffer.from(redaction.marker, "latin1");
  let held = "";
  const emit = (
    text: string,
    spans: Span[],
    controller: TransformStreamDefaultController<Uint8Array>,
  ) => {
    let at = 0;
    const parts: Uint8Array[] = [];
    for (const span of spans) {
      parts.push(span.secret ? marker : Buffer.from(text.slice(at, at + span.length), "latin1"));
      at += span.length;
    }
    held = text.slice(at);
    for (const part of parts) if (part.length > 0) controller.enqueue(part);
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      const text = held +
        Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("latin1");
      emit(text, stream.spans(text.slice(held.length)), controller);
    },
    flush(controller) {
      emit(held, stream.endSpans(), controller);
    },
  });
}

/**
 * Redaction of a streamed text: a secret split across two chunks is still caught. The redactor holds
 * back at most the longest secret form minus one character, and what it emits is exactly what
 * redacting the whole text at once would give (a property test proves it).
 */
import { REDACTED, type Redactor } from "./redactor.ts";

/** Redacts a text that arrives in chunks. Call `push` for each chunk and `flush` at the end. */
export class StreamRedactor {
  #held = "";

  constructor(readonly redactor: Redactor) {}

  /** Takes the next chunk; returns the redacted text that is now safe to pass on. */
  push(chunk: string): string {
    const text = this.#held + chunk;
    const keep = Math.max(0, this.redactor.longest - 1);
    let cut = Math.max(0, text.length - keep);
    // Every match that starts before the cut is decided by text already here; one that straddles
    // the cut moves the cut to its end, so no secret is ever split between emitted and held text.
    let out = "";
    let from = 0;
    for (const [start, end] of this.redactor.matches(text)) {
      if (start >= cut) break;
      out += text.slice(from, start) + REDACTED;
      from = end;
      if (end > cut) cut = end;
    }
    out += text.slice(from, Math.max(from, cut));
    this.#held = text.slice(Math.max(from, cut));
    return out;
  }

  /** Ends the stream: the held text, redacted. */
  flush(): string {
    const rest = this.redactor.redact(this.#held);
    this.#held = "";
    return rest;
  }
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

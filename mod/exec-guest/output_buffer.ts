/** One captured output stream: bytes kept up to a cap, the rest counted and dropped. */

/** A stream's captured bytes with its cap. */
export class OutputBuffer {
  private readonly chunks: Uint8Array[] = [];
  private kept = 0;
  /** Whether bytes were dropped because the cap was reached. */
  truncated = false;

  constructor(private readonly cap: number) {}

  /** Keeps a copy of what fits under the cap; returns the part kept (possibly empty). */
  push(chunk: Uint8Array): Uint8Array {
    const room = this.cap - this.kept;
    if (chunk.byteLength > room) this.truncated = true;
    if (room <= 0) return new Uint8Array(0);
    // Always a copy: the caller reuses its read buffer.
    const part = chunk.slice(0, Math.min(room, chunk.byteLength));
    this.chunks.push(part);
    this.kept += part.byteLength;
    return part;
  }

  /** How many bytes are kept. */
  get length(): number {
    return this.kept;
  }

  /** The kept bytes from byte offset `since` on, chunk by chunk, without copying. */
  *pieces(since = 0): Generator<Uint8Array> {
    let at = 0;
    for (const chunk of this.chunks) {
      const end = at + chunk.byteLength;
      if (end > since) yield since > at ? chunk.subarray(since - at) : chunk;
      at = end;
    }
  }

  /** The kept bytes from `since` on, as text (invalid UTF-8 becomes U+FFFD). */
  text(since = 0): string {
    const decoder = new TextDecoder();
    let text = "";
    for (const piece of this.pieces(since)) text += decoder.decode(piece, { stream: true });
    return text + decoder.decode();
  }
}

/** One captured output stream: bytes kept up to a cap, the rest counted and dropped. */

/** A stream's captured bytes with its cap. */
export class OutputBuffer {
  private chunks: Uint8Array[] = [];
  private kept = 0;
  /** Whether bytes were dropped because the cap was reached. */
  truncated = false;

  constructor(private readonly cap: number) {}

  /** Keeps what fits under the cap; returns the part kept (possibly empty). */
  push(chunk: Uint8Array): Uint8Array {
    const room = this.cap - this.kept;
    if (room <= 0) {
      this.truncated = true;
      return new Uint8Array(0);
    }
    const part = chunk.byteLength > room ? chunk.slice(0, room) : chunk;
    if (chunk.byteLength > room) this.truncated = true;
    this.chunks.push(part);
    this.kept += part.byteLength;
    return part;
  }

  /** How many bytes are kept. */
  get length(): number {
    return this.kept;
  }

  /** The kept bytes from `since` on, as text (invalid UTF-8 becomes U+FFFD). */
  text(since = 0): string {
    return new TextDecoder().decode(this.bytes(since));
  }

  /** The kept bytes from `since` on. */
  bytes(since = 0): Uint8Array {
    if (this.chunks.length > 1) {
      const whole = new Uint8Array(this.kept);
      let at = 0;
      for (const chunk of this.chunks) {
        whole.set(chunk, at);
        at += chunk.byteLength;
      }
      this.chunks = [whole];
    }
    const all = this.chunks[0] ?? new Uint8Array(0);
    return since <= 0 ? all : all.subarray(Math.min(since, all.byteLength));
  }
}

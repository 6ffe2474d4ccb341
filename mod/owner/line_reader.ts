/**
 * One buffered reader of lines over standard input. Every answer is read from it in order, so a
 * line typed while the turn ran is the next answer read: it refuses, it never approves by accident.
 */

/** Reads lines, one at a time, from a reader such as Deno.stdin. */
export class LineReader {
  #buffer = new Uint8Array(0);
  #ended = false;

  constructor(readonly source: { read(into: Uint8Array): Promise<number | null> }) {}

  /**
   * Drops what was read but not yet taken: lines that came in with an answer already read, so
   * typed before the question they would answer was shown. A terminal sends each line on its own.
   */
  dropWaiting(): void {
    this.#buffer = new Uint8Array(0);
  }

  /** The next line without its line ending, or null at the end of the input. */
  async readLine(): Promise<string | null> {
    for (;;) {
      const newline = this.#buffer.indexOf(0x0a);
      if (newline !== -1) {
        const line = new TextDecoder().decode(this.#buffer.subarray(0, newline));
        this.#buffer = this.#buffer.slice(newline + 1);
        return line.replace(/\r$/, "");
      }
      if (this.#ended) {
        if (this.#buffer.length === 0) return null;
        const rest = new TextDecoder().decode(this.#buffer);
        this.#buffer = new Uint8Array(0);
        return rest;
      }
      const chunk = new Uint8Array(4096);
      const read = await this.source.read(chunk);
      if (read === null) {
        this.#ended = true;
        continue;
      }
      const joined = new Uint8Array(this.#buffer.length + read);
      joined.set(this.#buffer);
      joined.set(chunk.subarray(0, read), this.#buffer.length);
      this.#buffer = joined;
    }
  }
}

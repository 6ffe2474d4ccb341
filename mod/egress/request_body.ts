/**
 * Where a forwarded plain-HTTP request's body ends, without I/O: after Content-Length bytes, after
 * the last chunk and trailers of a chunked body, or at once when it has neither. The proxy sends
 * the origin the body and nothing past it, so a second request on the same connection (which
 * could name another host in its Host header) never reaches the origin. A chunked body is sent
 * re-framed, as the proxy read it: each chunk's size in hex and CRLF, its data and CRLF, then
 * `0` CRLF CRLF, with no chunk extension and no trailer, so an origin that reads chunk lines
 * differently (a bare LF, any two bytes after a chunk's data, no trailers) reads the same chunks.
 */

/** How a request's body is framed. */
export type BodyFraming = { length: number } | { chunked: true } | null;

/** The framing the headers declare, or a problem (both, a coding other than chunked, a bad length). */
export function bodyFraming(fields: readonly [string, string][]): BodyFraming | {
  problem: string;
} {
  const values = (name: string) =>
    fields.filter(([field]) => field.toLowerCase() === name).map(([, value]) => value);
  const lengths = values("content-length").flatMap((value) => value.split(","))
    .map((part) => part.trim());
  const codings = values("transfer-encoding").flatMap((value) => value.split(","))
    .map((part) => part.trim().toLowerCase());
  if (lengths.length > 0 && codings.length > 0) {
    return { problem: "the request has both Content-Length and Transfer-Encoding" };
  }
  if (codings.length > 0) {
    if (codings.length !== 1 || codings[0] !== "chunked") {
      return { problem: "the request's Transfer-Encoding is not chunked alone" };
    }
    return { chunked: true };
  }
  if (lengths.length === 0) return null;
  if (!lengths.every((part) => /^[0-9]{1,15}$/.test(part) && part === lengths[0])) {
    return { problem: "the request's Content-Length is not one whole number" };
  }
  return { length: Number(lengths[0]) };
}

const MAX_LINE = 4096;

/** Follows a body through its bytes: how many of each chunk of them belong to it, and what to send. */
export class BodyEnd {
  #left: number;
  readonly #chunked: boolean;
  /** For a chunked body: what is being read. */
  #state: "size" | "data" | "data-end" | "trailer" | "done" = "size";
  #line = "";
  #bad = false;

  constructor(framing: BodyFraming) {
    this.#chunked = framing !== null && "chunked" in framing;
    this.#left = framing === null ? 0 : "length" in framing ? framing.length : 0;
    if (!this.#chunked && this.#left === 0) this.#state = "done";
  }

  /** Whether the body has ended. */
  get done(): boolean {
    return this.#state === "done";
  }

  /** Whether a chunked body broke its framing (the request is cut off there). */
  get bad(): boolean {
    return this.#bad;
  }

  /** How many of `bytes`, from their start, belong to the body. */
  take(bytes: Uint8Array): number {
    return this.pass(bytes).count;
  }

  /**
   * How many of `bytes`, from their start, belong to the body, and the bytes to send the origin
   * for them: a length-framed body's bytes as they are; a chunked body's data, with its framing
   * written anew (a line is sent once it is whole and read, never one the proxy refused).
   */
  pass(bytes: Uint8Array): { count: number; out: Uint8Array } {
    if (!this.#chunked) {
      const count = Math.min(this.#left, bytes.length);
      this.#left -= count;
      if (this.#left === 0) this.#state = "done";
      return { count, out: bytes.subarray(0, count) };
    }
    const out: Uint8Array[] = [];
    let at = 0;
    while (at < bytes.length && this.#state !== "done" && !this.#bad) {
      if (this.#state === "data") {
        const count = Math.min(this.#left, bytes.length - at);
        out.push(bytes.subarray(at, at + count));
        at += count;
        this.#left -= count;
        if (this.#left === 0) this.#state = "data-end";
        continue;
      }
      const byte = bytes[at++];
      if (byte !== 10) {
        this.#line += String.fromCharCode(byte);
        if (this.#line.length > MAX_LINE) this.#bad = true;
        continue;
      }
      const line = this.#line.replace(/\r$/, "");
      this.#line = "";
      const framing = this.#endOfLine(line);
      if (framing !== "") out.push(new TextEncoder().encode(framing));
    }
    return { count: at, out: out.length === 1 ? out[0] : joined(out) };
  }

  /** Reads a whole line of a chunked body's framing; returns the framing to send for it. */
  #endOfLine(line: string): string {
    if (this.#state === "data-end") {
      if (line !== "") {
        this.#bad = true;
        return "";
      }
      this.#state = "size";
      return "\r\n";
    }
    if (this.#state === "size") {
      const size = /^([0-9a-fA-F]{1,12})[ \t]*(;.*)?$/.exec(line);
      if (size === null) {
        this.#bad = true;
        return "";
      }
      this.#left = parseInt(size[1], 16);
      this.#state = this.#left === 0 ? "trailer" : "data";
      return this.#left === 0 ? "" : `${this.#left.toString(16)}\r\n`;
    }
    // A trailer line is dropped; the body's end is sent when the client's ends.
    if (this.#state === "trailer" && line === "") {
      this.#state = "done";
      return "0\r\n\r\n";
    }
    return "";
  }
}

/** The bytes of `parts` one after another. */
function joined(parts: readonly Uint8Array[]): Uint8Array {
  const all = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.length;
  }
  return all;
}

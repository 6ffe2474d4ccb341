/**
 * The chain verifier (docs/audit.md#the-chain): a pure state machine, no I/O and no clock, fed file
 * by file and line by line. It hashes and parses each line and leaves the judging to ChainMachine.
 * Shared by the writer's startup check and the tests; verifyHome feeds the same machine, hashing on
 * a second thread.
 */
import type { ChainReport } from "./chain_report.ts";
import { ChainMachine, type VerifierOptions } from "./chain_machine.ts";
import { sha256Hex } from "./hash.ts";
import { asciiText } from "./json_bytes.ts";
import { parseRecordLine, parseRecordText } from "./records.ts";

export type { VerifierOptions } from "./chain_machine.ts";

/** Verifies an audit log fed to it file by file and line by line. */
export class ChainVerifier {
  #machine: ChainMachine;

  /** A verifier for a whole log: it expects seq 0 and a prev of all zeros. */
  constructor(options: VerifierOptions = {}) {
    this.#machine = new ChainMachine(options);
  }

  /** A verifier that continues from a known point: the next seq and the hash of the line before. */
  static resume(nextSeq: number, prev: string, options: VerifierOptions = {}): ChainVerifier {
    const verifier = new ChainVerifier();
    verifier.#machine = ChainMachine.resume(nextSeq, prev, options);
    return verifier;
  }

  /** Starts the next file; files must be given in name order (linesBefore: ChainMachine.file's). */
  file(name: string, linesBefore = 0): void {
    this.#machine.file(name, linesBefore);
  }

  /** One line of the current file, without its newline; hasNewline is false only for a last line. */
  line(bytes: Uint8Array, hasNewline: boolean): void {
    this.#line(bytes, null, hasNewline);
  }

  /** A line, with its text when the caller has already decoded it (ASCII content only). */
  #line(bytes: Uint8Array, text: string | null, hasNewline: boolean): void {
    const parsed = text === null ? parseRecordLine(bytes) : parseRecordText(text);
    this.#machine.line({
      bytes: bytes.length,
      hasNewline,
      hash: sha256Hex(bytes),
      record: parsed.record,
      error: parsed.error,
    });
  }

  /**
   * Starts a file and feeds each of its lines; `linesBefore` lines of it come before `content`
   * (a resume from the middle of a file).
   */
  feed(name: string, content: Uint8Array, linesBefore = 0): void {
    this.file(name, linesBefore);
    // Decoding once is much cheaper than once a line. When every byte is ASCII, string offsets
    // are byte offsets and each line's text is a slice; otherwise each line is decoded alone.
    const text = asciiText(content);
    let start = 0;
    while (start < content.length) {
      const found = content.indexOf(10, start);
      const end = found === -1 ? content.length : found;
      const lineText = text === null ? null : text.slice(start, end);
      this.#line(content.subarray(start, end), lineText, found !== -1);
      start = end + 1;
    }
  }

  /** Judges the line held back and returns the whole report. */
  finish(): ChainReport {
    return this.#machine.finish();
  }
}

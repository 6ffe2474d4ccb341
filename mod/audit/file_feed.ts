/**
 * Feeds whole audit files to a ChainMachine, as ChainVerifier.feed does, with the same lines and
 * the same report, at less cost a line: each chunk of whole lines is decoded once, the hashes come
 * from a LineHasher (a second thread, for `gurt audit verify`), an ASCII line written as the writer
 * writes it is read by the LineScanner, another by JSON.parse and the hand-written check, and zod
 * (records.ts) is loaded only when a line is not a record the check accepts, to say what is wrong
 * with it.
 */
import type { ChainMachine } from "./chain_machine.ts";
import type { ChunkStream, HashedChunk } from "./line_hasher.ts";
import { asciiText, LineScanner } from "./line_scanner.ts";
import { isCanonicalRecord } from "./record_check.ts";
import type { AuditRecord } from "./records.ts";

/** A file to feed: its name, and its chunks as the hasher hashes them. */
export interface FileChunks {
  name: string;
  chunks: ChunkStream;
}

/** Starts the file in the machine and feeds it each line, with its hash, in order. */
export async function feedFile(machine: ChainMachine, file: FileChunks): Promise<void> {
  machine.file(file.name);
  for (let chunk = await file.chunks.next(); chunk !== null; chunk = await file.chunks.next()) {
    await feedChunk(machine, chunk);
  }
}

/** Keeps every byte order mark: each line's own is dropped below, as decoding it alone would. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Feeds the machine each line of a chunk, parsed, with its hash from the hasher's answer. */
async function feedChunk(machine: ChainMachine, chunk: HashedChunk): Promise<void> {
  const { bytes, hex, ends } = chunk;
  if (hex.length !== ends.length * 64) {
    throw new Error(`the audit hasher gave ${hex.length / 64} hashes for ${ends.length} lines`);
  }
  let text = asciiText(bytes);
  // In ASCII a byte's offset is its character's, and the scanner reads the lines' bytes.
  const scanner = text === null ? null : new LineScanner(bytes, text);
  if (text === null) {
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      // Not UTF-8 somewhere: each line is decoded and parsed alone, exactly as ChainVerifier does.
      return await feedEachLine(machine, chunk);
    }
  }
  // A line break is never inside a UTF-8 character, so the text's lines are the bytes' lines.
  const parts = scanner === null ? text.split("\n") : null;
  let start = 0;
  for (let i = 0; i < ends.length; i++) {
    const end = ends[i];
    let record = scanner === null ? null : scanner.record(start, end);
    let error: string | null = null;
    if (record === null) {
      let lineText = parts === null ? text.slice(start, end) : parts[i];
      // A strict decoder drops one byte order mark at the start of what it decodes.
      if (parts !== null && lineText.charCodeAt(0) === 0xfeff) lineText = lineText.slice(1);
      record = canonicalRecord(lineText);
      if (record === null) {
        const parsed = (await recordsModule()).parseRecordText(lineText);
        record = parsed.record;
        error = parsed.error;
      }
    }
    const hash = hex.slice(i * 64, i * 64 + 64);
    // A line ends at its newline, or at the end of a last line that has none.
    machine.line({ bytes: end - start, hasNewline: end < bytes.length, hash, record, error });
    start = end + 1;
  }
}

/** The record, if the text is JSON that the hand-written check accepts; else null. */
function canonicalRecord(text: string): AuditRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return isCanonicalRecord(value) ? value as AuditRecord : null;
}

async function feedEachLine(machine: ChainMachine, chunk: HashedChunk): Promise<void> {
  const { parseRecordLine } = await recordsModule();
  const { bytes, hex, ends } = chunk;
  let start = 0;
  for (let i = 0; i < ends.length; i++) {
    const end = ends[i];
    const { record, error } = parseRecordLine(bytes.subarray(start, end));
    const hash = hex.slice(i * 64, i * 64 + 64);
    machine.line({ bytes: end - start, hasNewline: end < bytes.length, hash, record, error });
    start = end + 1;
  }
}

let records: Promise<typeof import("./records.ts")> | null = null;

/** records.ts and zod, loaded the first time a line needs them. */
function recordsModule(): Promise<typeof import("./records.ts")> {
  records ??= import("./records.ts");
  return records;
}

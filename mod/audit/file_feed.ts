/**
 * Feeds whole audit files to a ChainMachine, as ChainVerifier.feed does, with the same lines and
 * the same report, at less cost a line: the hashes come from a LineHasher (a second thread, for
 * `gurt audit verify`) as 32 bytes a line; a line written as the writer writes it is read by the
 * CompactScanner into numbers, with no string or object made for it, and its prev is compared with
 * the hash of the line before where both are; any other line (a Recovery, AcceptedBreak or
 * TaskStarted record, a line with text outside ASCII, a damaged line) is decoded alone and read by
 * JSON.parse and the hand-written check, and zod (records.ts) is loaded only when a line is not a
 * record the check accepts, to say what is wrong with it.
 */
import { compactLine, hexOf } from "./chain_line.ts";
import type { ChainMachine } from "./chain_machine.ts";
import { CompactScanner } from "./compact_scanner.ts";
import type { ChunkStream, HashedChunk } from "./line_hasher.ts";
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

/** Feeds the machine each line of a chunk, read, with its hash from the hasher's answer. */
async function feedChunk(machine: ChainMachine, chunk: HashedChunk): Promise<void> {
  const { bytes, digests, ends } = chunk;
  if (digests.length !== ends.length * 32) {
    throw new Error(`the audit hasher gave ${digests.length / 32} hashes for ${ends.length} lines`);
  }
  const scanner = new CompactScanner();
  scanner.content(bytes);
  const line = compactLine();
  line.digests = digests;
  let start = 0;
  for (let i = 0; i < ends.length; i++) {
    const end = ends[i];
    // A line ends at its newline, or at the end of a last line that has none.
    const hasNewline = end < bytes.length;
    // The line's hash; the scan compares its prev with the one before it, in the same chunk (for a
    // chunk's first line the machine compares the two as hex).
    line.digestAt = i * 32;
    if (scanner.scan(start, end, line)) {
      line.bytes = end - start;
      line.hasNewline = hasNewline;
      machine.compactLine(line);
    } else {
      const lineBytes = bytes.subarray(start, end);
      const { record, error } = lineRecord(lineBytes) ?? await zodRecord(lineBytes);
      machine.line({ bytes: end - start, hasNewline, hash: hexOf(digests, i * 32), record, error });
    }
    start = end + 1;
  }
}

/** A decoder that drops a byte order mark at the start, as records.ts's parseRecordLine's does. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

type Parsed = { record: AuditRecord; error: null } | { record: null; error: string };

/**
 * The record of a line the compact scanner did not read, as parseRecordLine gives it, when it is
 * UTF-8 and JSON.parse and the hand-written check read it; else null.
 */
function lineRecord(bytes: Uint8Array): Parsed | null {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return null;
  }
  const record = canonicalRecord(text);
  return record === null ? null : { record, error: null };
}

/** The record of a line, or what is wrong with it, by records.ts's parseRecordLine and zod. */
async function zodRecord(bytes: Uint8Array): Promise<Parsed> {
  return (await recordsModule()).parseRecordLine(bytes);
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

let records: Promise<typeof import("./records.ts")> | null = null;

/** records.ts and zod, loaded the first time a line needs them. */
function recordsModule(): Promise<typeof import("./records.ts")> {
  records ??= import("./records.ts");
  return records;
}

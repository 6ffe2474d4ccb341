/**
 * Feeds whole audit files to a ChainMachine, as ChainVerifier.feed does, with the same lines and
 * the same report, at less cost a line: each chunk of whole lines is decoded once, the hashes come
 * from a LineHasher (a second thread, for `gurt audit verify`), an ASCII line written as the writer
 * writes it is read by the LineScanner, another by JSON.parse and the hand-written check, and zod
 * (records.ts) is loaded only when a line is not a record the check accepts, to say what is wrong
 * with it.
 */
import type { ChainMachine } from "./chain_machine.ts";
import type { LineHasher } from "./line_hasher.ts";
import { asciiText, LineScanner } from "./line_scanner.ts";
import { isCanonicalRecord } from "./record_check.ts";
import type { AuditRecord } from "./records.ts";

/** About how many bytes the hasher is sent at a time; a chunk always ends at a line's end. */
const CHUNK_BYTES = 1 << 20;

/** An audit file's name and content. */
export interface AuditFile {
  name: string;
  content: Uint8Array;
}

/** Options of hashFile. */
export interface HashFileOptions {
  /** About how many bytes a chunk holds (the tests make it small); 1 MiB by default. */
  chunkBytes?: number;
}

/** A file whose chunks are being hashed: the promise of each chunk's hashes, in order. */
export interface HashedFile {
  name: string;
  content: Uint8Array;
  chunks: { start: number; end: number; hex: Promise<string> }[];
}

/** Splits the file into chunks of whole lines and hands every chunk to the hasher at once. */
export function hashFile(
  file: AuditFile,
  hasher: LineHasher,
  options: HashFileOptions = {},
): HashedFile {
  const { name, content } = file;
  const chunkBytes = Math.max(1, options.chunkBytes ?? CHUNK_BYTES);
  const chunks: HashedFile["chunks"] = [];
  let start = 0;
  while (start < content.length) {
    const newline = content.indexOf(10, Math.min(start + chunkBytes, content.length) - 1);
    const end = newline === -1 ? content.length : newline + 1;
    const hex = hasher.hashLines(content.subarray(start, end));
    // Awaited in order later; until then a failure must not count as an unhandled rejection.
    hex.catch(() => {});
    chunks.push({ start, end, hex });
    start = end;
  }
  return { name, content, chunks };
}

/** Starts the file in the machine and feeds it each line, with its hash, in order. */
export async function feedFile(machine: ChainMachine, file: HashedFile): Promise<void> {
  machine.file(file.name);
  for (const chunk of file.chunks) {
    // The hasher is ahead of this thread after the first chunk, so this seldom waits.
    const hex = await chunk.hex;
    await feedChunk(machine, file.content.subarray(chunk.start, chunk.end), hex);
  }
}

/** Keeps every byte order mark: each line's own is dropped below, as decoding it alone would. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Feeds the machine each line of a chunk, parsed, with its hash from the hasher's answer. */
async function feedChunk(machine: ChainMachine, bytes: Uint8Array, hex: string): Promise<void> {
  let text = asciiText(bytes);
  // In ASCII a byte's offset is its character's, and the scanner reads the lines' bytes.
  const scanner = text === null ? null : new LineScanner(bytes, text);
  if (text === null) {
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      // Not UTF-8 somewhere: each line is decoded and parsed alone, exactly as ChainVerifier does.
      return await feedEachLine(machine, bytes, hex);
    }
  }
  // A line break is never inside a UTF-8 character, so the text's lines are the bytes' lines.
  const parts = scanner === null ? text.split("\n") : null;
  let start = 0;
  let index = 0;
  while (start < bytes.length) {
    const found = bytes.indexOf(10, start);
    const end = found === -1 ? bytes.length : found;
    let record = scanner === null ? null : scanner.record(start, end);
    let error: string | null = null;
    if (record === null) {
      let lineText = parts === null ? text.slice(start, end) : parts[index];
      // A strict decoder drops one byte order mark at the start of what it decodes.
      if (parts !== null && lineText.charCodeAt(0) === 0xfeff) lineText = lineText.slice(1);
      record = canonicalRecord(lineText);
      if (record === null) {
        const parsed = (await recordsModule()).parseRecordText(lineText);
        record = parsed.record;
        error = parsed.error;
      }
    }
    const hash = hashAt(hex, index);
    machine.line({ bytes: end - start, hasNewline: found !== -1, hash, record, error });
    index++;
    start = end + 1;
  }
  if (hex.length !== index * 64) throw hashCountError(hex, index);
}

/** The hash of the chunk's line `index` in the hasher's answer. */
function hashAt(hex: string, index: number): string {
  return hex.slice(index * 64, index * 64 + 64);
}

function hashCountError(hex: string, lines: number): Error {
  return new Error(`the audit hasher gave ${hex.length / 64} hashes for ${lines} lines`);
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

async function feedEachLine(machine: ChainMachine, bytes: Uint8Array, hex: string): Promise<void> {
  const { parseRecordLine } = await recordsModule();
  let start = 0;
  let index = 0;
  while (start < bytes.length) {
    const found = bytes.indexOf(10, start);
    const end = found === -1 ? bytes.length : found;
    const { record, error } = parseRecordLine(bytes.subarray(start, end));
    const hash = hashAt(hex, index);
    machine.line({ bytes: end - start, hasNewline: found !== -1, hash, record, error });
    index++;
    start = end + 1;
  }
  if (hex.length !== index * 64) throw hashCountError(hex, index);
}

let records: Promise<typeof import("./records.ts")> | null = null;

/** records.ts and zod, loaded the first time a line needs them. */
function recordsModule(): Promise<typeof import("./records.ts")> {
  records ??= import("./records.ts");
  return records;
}

/**
 * Feeds whole audit files to a ChainMachine, as ChainVerifier.feed does, with the same lines and
 * the same report, at less cost a line: each chunk of whole lines is decoded once, the hashes come
 * from a LineHasher (a second thread, for `gurt audit verify`), an ASCII line written as the writer
 * writes it is read by the LineScanner, another by JSON.parse and the hand-written check, and zod
 * (records.ts) is loaded only when a line is not a record the check accepts, to say what is wrong
 * with it.
 */
import type { ChainMachine, LineInput } from "./chain_machine.ts";
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
    const bytes = file.content.subarray(chunk.start, chunk.end);
    const lines = await parseChunk(bytes);
    const hex = await chunk.hex;
    if (hex.length !== lines.length * 64) {
      throw new Error(`the audit hasher gave ${hex.length / 64} hashes for ${lines.length} lines`);
    }
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      line.hash = hex.slice(i * 64, i * 64 + 64);
      machine.line(line);
    }
  }
}

/** Keeps every byte order mark: each line's own is dropped below, as decoding it alone would. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The chunk's lines, parsed, without their hashes yet. */
async function parseChunk(bytes: Uint8Array): Promise<LineInput[]> {
  let text = asciiText(bytes);
  const ascii = text !== null;
  if (text === null) {
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      // Not UTF-8 somewhere: each line is decoded and parsed alone, exactly as ChainVerifier does.
      return await parseEachLine(bytes);
    }
  }
  const lines: LineInput[] = [];
  const refused: { line: LineInput; text: string }[] = [];
  const add = (length: number, hasNewline: boolean, record: AuditRecord | null, text: string) => {
    const line: LineInput = { bytes: length, hasNewline, hash: "", record, error: null };
    lines.push(line);
    if (record === null) refused.push({ line, text });
  };
  // In ASCII a byte's offset is its character's, and the scanner reads the lines' bytes.
  if (ascii) {
    const scanner = new LineScanner(bytes, text);
    let start = 0;
    while (start < bytes.length) {
      const found = bytes.indexOf(10, start);
      const end = found === -1 ? bytes.length : found;
      const record = scanner.record(start, end);
      const lineText = record === null ? text.slice(start, end) : "";
      add(end - start, found !== -1, record ?? canonicalRecord(lineText), lineText);
      start = end + 1;
    }
  } else {
    // A line break is never inside a UTF-8 character, so the text's lines are the bytes' lines.
    const parts = text.split("\n");
    let start = 0;
    while (start < bytes.length) {
      const found = bytes.indexOf(10, start);
      const end = found === -1 ? bytes.length : found;
      let lineText = parts[lines.length];
      // A strict decoder drops one byte order mark at the start of what it decodes.
      if (lineText.charCodeAt(0) === 0xfeff) lineText = lineText.slice(1);
      add(end - start, found !== -1, canonicalRecord(lineText), lineText);
      start = end + 1;
    }
  }
  if (refused.length > 0) {
    const { parseRecordText } = await recordsModule();
    for (const { line, text } of refused) {
      const parsed = parseRecordText(text);
      line.record = parsed.record;
      line.error = parsed.error;
    }
  }
  return lines;
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

async function parseEachLine(bytes: Uint8Array): Promise<LineInput[]> {
  const { parseRecordLine } = await recordsModule();
  const lines: LineInput[] = [];
  let start = 0;
  while (start < bytes.length) {
    const found = bytes.indexOf(10, start);
    const end = found === -1 ? bytes.length : found;
    const parsed = parseRecordLine(bytes.subarray(start, end));
    lines.push({
      bytes: end - start,
      hasNewline: found !== -1,
      hash: "",
      record: parsed.record,
      error: parsed.error,
    });
    start = end + 1;
  }
  return lines;
}

let records: Promise<typeof import("./records.ts")> | null = null;

/** records.ts and zod, loaded the first time a line needs them. */
function recordsModule(): Promise<typeof import("./records.ts")> {
  records ??= import("./records.ts");
  return records;
}

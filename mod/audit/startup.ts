/**
 * The startup check's reading half (docs/audit.md#start-and-crashes, step 2): which files to verify
 * and from where. The writer acts on the report it returns.
 *
 * The writer leaves a head mark beside the log (audit/.head): where the last record it knew of
 * ends in the newest file, its seq, its line, its hash, and the SHA-256 of the whole file up to
 * there. A start whose newest file is still the mark's, and whose bytes up to the mark still hash
 * to that, verifies only the lines after the mark: the bytes before are exactly those verified
 * before, so any change to them (a byte, a line swapped or cut) still fails the start, read again
 * whole to say where. The file is hashed in pieces, never held whole, and no line before the mark
 * is parsed. Anything else (no mark, another file, other bytes) is read as before.
 */
import { createHash, type Hash } from "node:crypto";
import type { ChainReport } from "./chain_report.ts";
import { ChainVerifier } from "./chain_verifier.ts";
import { lastLineOf, listAuditFiles, readRange } from "./files.ts";
import { sha256Hex } from "./hash.ts";
import { parseRecordLine } from "./records.ts";

/** Where the last record known to verify ends: the writer keeps it in audit/.head. */
export interface HeadMark {
  /** The audit file's name. */
  file: string;
  /** The byte just after the record's newline: where the next line starts. */
  bytes: number;
  /** The lines of the file up to and with the record. */
  lines: number;
  seq: number;
  sha256: string;
  /** The record's line's length, without its newline. */
  length: number;
  /** The SHA-256 of the file's first `bytes` bytes. */
  prefix_sha256: string;
}

/** The head mark's file name in the audit folder. */
export const HEAD_MARK = ".head";

/** The report of the startup check and the audit files it found, in name order. */
export interface StartupReport {
  report: ChainReport;
  files: string[];
  /** Whether only the latest file (or its end) was read, resumed from a known line. */
  resumed: boolean;
  /** The head mark of the log as read, when its last line is a whole record; else null. */
  mark: HeadMark | null;
  /** With a mark: the running SHA-256 of the newest file's bytes, for the writer to go on with. */
  prefix: Hash | null;
}

/**
 * Without acceptBreak: verifies the latest file from the head mark, else from the last line of
 * the file before it (the whole log if that line is not a record). With acceptBreak: verifies
 * every file.
 */
export async function checkAtStartup(dir: string, acceptBreak: boolean): Promise<StartupReport> {
  const files = await listAuditFiles(dir);
  const latest = files[files.length - 1];
  if (!acceptBreak && latest !== undefined) {
    const mark = await readHeadMark(dir);
    const prefix = mark !== null && mark.file === latest
      ? await heldPrefix(`${dir}/${latest}`, mark)
      : null;
    if (mark !== null && prefix !== null) {
      const verifier = ChainVerifier.resume(mark.seq + 1, mark.sha256);
      const read = await feedInPieces(verifier, `${dir}/${latest}`, {
        name: latest,
        from: mark.bytes,
        linesBefore: mark.lines,
        hash: prefix,
      });
      return finished(verifier.finish(), files, { read, before: mark, prefix });
    }
  }
  if (!acceptBreak && files.length > 1) {
    const last = await lastLineOfFile(`${dir}/${files[files.length - 2]}`);
    const parsed = last !== null && last.hasNewline ? parseRecordLine(last.bytes) : null;
    if (last !== null && parsed !== null && parsed.record !== null) {
      const verifier = ChainVerifier.resume(parsed.record.seq + 1, sha256Hex(last.bytes));
      const prefix = createHash("sha256");
      const read = await feedInPieces(verifier, `${dir}/${latest}`, { name: latest, hash: prefix });
      return finished(verifier.finish(), files, { read, before: null, prefix });
    }
  }
  const verifier = new ChainVerifier();
  let read: Read = { bytes: 0, last: null };
  let prefix = createHash("sha256");
  for (const name of files) {
    prefix = createHash("sha256");
    read = await feedInPieces(verifier, `${dir}/${name}`, { name, hash: prefix });
  }
  const report = verifier.finish();
  return { ...finished(report, files, { read, before: null, prefix }), resumed: false };
}

/** What feedInPieces read: its bytes, and its last line's length and newline (null: none). */
interface Read {
  bytes: number;
  last: { length: number; hasNewline: boolean } | null;
}

/** The bytes a piece of a file is read in: the file is never held whole. */
const PIECE_BYTES = 4 * 1024 * 1024;

/**
 * Feeds a file's lines from byte `from` on (the file's line `linesBefore` + 1 first), a piece of
 * whole lines at a time, and adds its bytes to `hash`.
 */
async function feedInPieces(
  verifier: ChainVerifier,
  path: string,
  options: { name: string; from?: number; linesBefore?: number; hash: Hash },
): Promise<Read> {
  const file = await Deno.open(path, { read: true });
  let lines = options.linesBefore ?? 0;
  let bytes = 0;
  let last: Read["last"] = null;
  verifier.file(options.name, lines);
  try {
    await file.seek(options.from ?? 0, Deno.SeekMode.Start);
    let carry = new Uint8Array(0);
    const buffer = new Uint8Array(PIECE_BYTES);
    for (;;) {
      const got = await file.read(buffer);
      const end = got === null;
      const read = end ? new Uint8Array(0) : buffer.subarray(0, got);
      const piece = carry.length === 0 ? read : concat(carry, read);
      // Whole lines now; at the end, the rest too, with or without its newline.
      const cut = end ? piece.length : piece.lastIndexOf(10) + 1;
      if (cut > 0) {
        const whole = piece.subarray(0, cut);
        verifier.feed(options.name, whole, lines);
        options.hash.update(whole);
        bytes += whole.length;
        const tail = lastLineOf(whole);
        if (tail !== null) last = { length: tail.bytes.length, hasNewline: tail.hasNewline };
        for (let at = whole.indexOf(10); at !== -1; at = whole.indexOf(10, at + 1)) lines++;
      }
      carry = piece.slice(cut);
      if (end) break;
    }
  } finally {
    file.close();
  }
  return { bytes, last };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The startup report, with the mark of the log as read and the hash to go on with, if clean. */
function finished(
  report: ChainReport,
  files: string[],
  read: { read: Read; before: HeadMark | null; prefix: Hash },
): StartupReport {
  const mark = markOf(report, read.read, read.before, read.prefix);
  return { report, files, resumed: true, mark, prefix: mark === null ? null : read.prefix };
}

/**
 * The mark of a clean report: its head is the last line of the newest file, of which `read` was
 * read (after `before`, the mark it resumed from, if any); null for a log with a failure, a torn
 * tail, or no record.
 */
function markOf(
  report: ChainReport,
  read: Read,
  before: HeadMark | null,
  prefix: Hash,
): HeadMark | null {
  if (report.failure !== null || report.torn_tail !== null || report.head === null) return null;
  const start = before?.bytes ?? 0;
  if (read.bytes === 0) return before;
  const last = read.last;
  if (last === null || !last.hasNewline || report.head_at === null) return null;
  return {
    file: report.head_at.file,
    bytes: start + read.bytes,
    lines: report.head_at.line,
    seq: report.head_at.seq,
    sha256: report.head,
    length: last.length,
    prefix_sha256: prefix.copy().digest("hex"),
  };
}

/** The head mark in `dir`, or null when there is none or it cannot be read as one. */
export async function readHeadMark(dir: string): Promise<HeadMark | null> {
  let value: unknown;
  try {
    value = JSON.parse(await Deno.readTextFile(`${dir}/${HEAD_MARK}`));
  } catch {
    return null;
  }
  const mark = value as Partial<HeadMark> | null;
  const whole = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
  if (
    mark === null || typeof mark !== "object" || typeof mark.file !== "string" ||
    !/^\d{4}-\d{2}-\d{2}\.jsonl$/.test(mark.file) || !whole(mark.bytes) || !whole(mark.lines) ||
    !whole(mark.seq) || !whole(mark.length) || typeof mark.sha256 !== "string" ||
    !/^[0-9a-f]{64}$/.test(mark.sha256) || typeof mark.prefix_sha256 !== "string" ||
    !/^[0-9a-f]{64}$/.test(mark.prefix_sha256) || mark.bytes! < mark.length! + 1
  ) {
    return null;
  }
  return mark as HeadMark;
}

/**
 * Writes the head mark (0600), through a temporary file and a rename: never half of one. Not
 * synced: a mark lost or stale only makes the next start read more.
 */
export function writeHeadMark(dir: string, mark: HeadMark): void {
  const temporary = `${dir}/${HEAD_MARK}.new`;
  Deno.writeTextFileSync(temporary, JSON.stringify(mark) + "\n", { mode: 0o600 });
  Deno.renameSync(temporary, `${dir}/${HEAD_MARK}`);
}

/**
 * The SHA-256 state of the file's first `mark.bytes` bytes (read in pieces) when they hash to the
 * mark's prefix and end with a line of its length, hash and seq; else null.
 */
async function heldPrefix(path: string, mark: HeadMark): Promise<Hash | null> {
  const start = mark.bytes - mark.length - 1;
  const bytes = await readRange(path, start, mark.length + 1).catch(() => null);
  if (bytes === null || bytes.length !== mark.length + 1 || bytes[mark.length] !== 10) return null;
  const line = bytes.subarray(0, mark.length);
  if (sha256Hex(line) !== mark.sha256 || parseRecordLine(line).record?.seq !== mark.seq) {
    return null;
  }
  const hash = createHash("sha256");
  const file = await Deno.open(path, { read: true });
  try {
    const buffer = new Uint8Array(1024 * 1024);
    let left = mark.bytes;
    while (left > 0) {
      const read = await file.read(buffer.subarray(0, Math.min(buffer.length, left)));
      if (read === null) return null;
      hash.update(buffer.subarray(0, read));
      left -= read;
    }
  } finally {
    file.close();
  }
  return hash.copy().digest("hex") === mark.prefix_sha256 ? hash : null;
}

/** The last line of a file, read from its end (not the whole file); null if it is empty. */
async function lastLineOfFile(
  path: string,
): Promise<{ bytes: Uint8Array; hasNewline: boolean } | null> {
  const size = (await Deno.stat(path)).size;
  let want = 64 * 1024;
  for (;;) {
    const start = Math.max(0, size - want);
    const tail = await readRange(path, start, size - start);
    const last = lastLineOf(tail);
    // Whole when a newline comes before it in what was read, or what was read is the whole file.
    if (
      last === null || start === 0 || last.bytes.length + (last.hasNewline ? 1 : 0) < tail.length
    ) {
      return last;
    }
    want *= 4;
  }
}

/** Fixture logs for the audit tests: written by the real writer, then damaged by each test. */
import fc from "fast-check";
import {
  type AuditEvent,
  type AuditFileOps,
  AuditWriter,
  type AuditWriterOptions,
  ChainVerifier,
  realFileOps,
  recordLine,
  sha256Hex,
  verifyHome,
  type VerifyHomeOptions,
  ZERO_HASH,
} from "../../mod/audit/mod.ts";
import { assertEquals } from "../assert.ts";
import { withHome } from "../kit/mod.ts";

export { makeHome, withHome } from "../kit/mod.ts";

/** The two days of the standard fixture: 5 records on DAY1 (seq 0-4), 8 on DAY2 (seq 5-12). */
export const DAY1 = "2026-11-28.jsonl";
export const DAY2 = "2026-11-29.jsonl";

/** A clock that starts at `start` and moves `stepMs` on at every reading. */
export function steppingClock(start: string, stepMs = 250): () => Date {
  let now = Date.parse(start) - stepMs;
  return () => new Date(now += stepMs);
}

/** A clock whose time the test sets. */
export function settableClock(start: string): { clock: () => Date; set(time: string): void } {
  let now = Date.parse(start);
  return { clock: () => new Date(now), set: (time: string) => (now = Date.parse(time)) };
}

/** Eight lines as the writer writes them, one of each kind of sampleEvent, twice over. */
export function writerLines(): string[] {
  return Array.from(
    { length: 8 },
    (_, i) =>
      recordLine({
        seq: i,
        time: "2026-11-29T18:00:00.000Z",
        prev: ZERO_HASH,
        event: sampleEvent(i),
      }),
  );
}

/** The i-th event of a plausible mix: decisions, approvals, results and owner acts. */
export function sampleEvent(i: number, session = "task-1"): AuditEvent {
  switch (i % 4) {
    case 0:
      return {
        type: "decision",
        session,
        call: `call-${i}`,
        tool: "read_file",
        arguments: JSON.stringify({ path: `/home/kyle/notes/${i}.md` }),
        outcome: { outcome: "allowed" },
        grant: "notes-read",
        grant_sha256: sha256Hex(new TextEncoder().encode("grant")),
        taint: "private",
        untrusted: false,
      };
    case 1:
      return {
        type: "result",
        session,
        call: `call-${i - 1}`,
        decision: i - 1,
        status: "result",
        class: "private",
        untrusted: false,
        truncated: false,
        bytes: 120 + i,
        sha256: sha256Hex(new TextEncoder().encode(`content ${i}`)),
        taint_after: "private",
      };
    case 2:
      return { type: "cost", task: session, cents: i, what: "usage" };
    default:
      return { type: "vault_set", name: `KEY_${i}` };
  }
}

/** Appends `count` sample events one after another with the given writer options; closes it. */
export async function writeEvents(
  home: string,
  count: number,
  options: AuditWriterOptions & { first?: number } = {},
): Promise<void> {
  const { writer } = await AuditWriter.open(home, options);
  try {
    for (let i = 0; i < count; i++) await writer.append(sampleEvent((options.first ?? 0) + i));
  } finally {
    writer.close();
  }
}

/** The standard fixture: 5 records on DAY1 and 8 on DAY2 by the real writer; `first` varies them. */
export async function standardLog(home: string, first = 0): Promise<void> {
  await writeEvents(home, 13, { clock: steppingClock("2026-11-28T23:59:58.750Z"), first });
}

/** The path of an audit file of a home. */
export function auditFile(home: string, name: string): string {
  return `${home}/audit/${name}`;
}

/** The lines of an audit file, without newlines; the final empty string is dropped. */
export async function readLines(home: string, name: string): Promise<string[]> {
  const text = await Deno.readTextFile(auditFile(home, name));
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Writes lines back, each with its newline. */
export async function writeLines(home: string, name: string, lines: string[]): Promise<void> {
  await Deno.writeTextFile(auditFile(home, name), lines.map((line) => `${line}\n`).join(""));
}

/** The SHA-256 of a line's text. */
export function lineHash(line: string): string {
  return sha256Hex(new TextEncoder().encode(line));
}

/**
 * Rewrites lines[from..] so each prev is the hash of the line before, as someone with write
 * access could; `before` is the hash of the line before lines[from].
 */
export function rechain(lines: string[], from: number, before: string): string[] {
  const out = lines.slice(0, from);
  let prev = before;
  for (const line of lines.slice(from)) {
    const record = JSON.parse(line);
    record.prev = prev;
    const text = recordLine(record);
    out.push(text);
    prev = lineHash(text);
  }
  return out;
}

/** File operations that write only the first `keep` bytes of the next write and then fail. */
export function tearingOps(keep: (bytes: Uint8Array) => number): AuditFileOps {
  return {
    async write(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
      await realFileOps.write(file, bytes.subarray(0, keep(bytes)));
      throw new Error("simulated crash in the middle of a write");
    },
    syncData: realFileOps.syncData,
  };
}

/** The names of a three-day log's files, oldest first. */
export const THREE_DAYS = ["2026-11-27.jsonl", DAY1, DAY2];

/** An audit file's name and content. */
export interface AuditFile {
  name: string;
  content: Uint8Array;
}

/**
 * A chained log of `count` records spread over the first `files` of THREE_DAYS, without the
 * writer: every third record a vault_set naming one of `names` in turn (some not ASCII).
 */
export function chainedLog(count: number, files: number, names = ["KËY"]): AuditFile[] {
  const encoder = new TextEncoder();
  let prev = ZERO_HASH;
  const texts: string[] = Array.from({ length: files }, () => "");
  for (let seq = 0; seq < count; seq++) {
    const event: AuditEvent = seq % 3 === 0
      ? { type: "vault_set", name: names[seq % names.length] }
      : sampleEvent(seq);
    const line = recordLine({ seq, time: "2026-11-29T10:00:00.000Z", prev, event });
    prev = sha256Hex(encoder.encode(line));
    texts[Math.floor((seq * files) / count)] += `${line}\n`;
  }
  return texts.map((text, i) => ({ name: THREE_DAYS[i], content: encoder.encode(text) }));
}

/** Up to three bytes of a log to change: in file `file` (modulo the files), at `at` (modulo). */
export const byteChanges = fc.array(
  fc.record({ file: fc.nat(), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
  { maxLength: 3 },
);

/** Makes those changes to the files' bytes, in place. */
export function changeBytes(
  files: Uint8Array[],
  changes: { file: number; at: number; byte: number }[],
): void {
  for (const change of changes) {
    const content = files[change.file % files.length];
    if (content.length > 0) content[change.at % content.length] = change.byte;
  }
}

/**
 * Writes the files (named as THREE_DAYS, in order) into a new home's audit folder and asserts
 * that verifyHome, with these options, reports what a ChainVerifier fed the same files reports.
 */
export async function assertVerifiesAsChainVerifier(
  files: Uint8Array[],
  options: VerifyHomeOptions,
): Promise<void> {
  const verifier = new ChainVerifier();
  files.forEach((content, i) => verifier.feed(THREE_DAYS[i], content));
  await withHome(async (home) => {
    await Deno.mkdir(`${home}/audit`);
    for (let i = 0; i < files.length; i++) {
      await Deno.writeFile(`${home}/audit/${THREE_DAYS[i]}`, files[i]);
    }
    const { dir: _dir, checkpoint: _checkpoint, ...chain } = await verifyHome(home, options);
    assertEquals(chain, verifier.finish());
  });
}

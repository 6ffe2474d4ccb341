/** The audit log index tests' kit: a log written by the real writer, a reader that counts bytes. */
import {
  type AuditEvent,
  AuditWriter,
  type ReadAt,
  readRange,
  type verifyHome,
} from "../../mod/audit/mod.ts";

export function event(i: number): AuditEvent {
  if (i % 3 === 0) return { type: "cost", task: `t${i % 7}`, cents: 1, what: `usage ${i}` };
  if (i % 3 === 1) return { type: "vault_set", name: `KEY_${i}` };
  return {
    type: "decision",
    session: "t1",
    call: `call-${i}`,
    tool: "example.echo",
    arguments: JSON.stringify({ text: `note ${i}` }),
    outcome: { outcome: "ask" },
    grant: null,
    grant_sha256: null,
    taint: "private",
    untrusted: false,
  };
}

/** Record `i` of a test log is event(i). A home whose log holds `count` records over days of `perDay` records each. */
export async function logOf(
  count: number,
  perDay: number,
): Promise<{ home: string; writer: AuditWriter }> {
  const home = await Deno.makeTempDir({ prefix: "gurt-log-index-" });
  // The writer reads the clock once a record: `perDay` records a day, a millisecond apart.
  let read = 0;
  const start = Date.parse("2026-11-01T00:00:00.000Z");
  const clock = () => new Date(start + Math.floor(read / perDay) * 86_400_000 + read++);
  const { writer } = await AuditWriter.open(home, { clock });
  for (let base = 0; base < count; base += 2000) {
    const batch = Array.from({ length: Math.min(2000, count - base) }, (_, i) => base + i);
    await Promise.all(batch.map((i) => writer.append(event(i))));
  }
  return { home, writer };
}

/** A reader that counts the bytes it reads. */
export function countingReader(): { readAt: ReadAt; bytes: () => number; reset(): void } {
  let bytes = 0;
  return {
    readAt: async (path, offset, length) => {
      const read = await readRange(path, offset, length);
      bytes += read.length;
      return read;
    },
    bytes: () => bytes,
    reset: () => (bytes = 0),
  };
}

export function summaryOf(report: Awaited<ReturnType<typeof verifyHome>>) {
  const { records, head, head_at, next_seq, failure, abandoned, unfinished, torn_tail } = report;
  return { records, head, head_at, next_seq, failure, abandoned, unfinished, torn_tail };
}

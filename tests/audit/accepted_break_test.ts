/**
 * Accepted breaks (docs/audit.md#accepted-breaks): what is accepted, what is not, and "nothing to
 * accept".
 */
import {
  AuditChainBrokenError,
  AuditNothingToAcceptError,
  AuditWriter,
  recordLine,
  verifyHome,
} from "../../mod/audit/mod.ts";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import {
  auditFile,
  DAY2,
  lineHash,
  makeHome,
  readLines,
  standardLog,
  writeLines,
} from "./helpers.ts";

/** The standard log with DAY2 line 3 cut short, and a break accepted for it as DAY2 line 9. */
async function withAcceptedBreak(work: (home: string) => Promise<void>): Promise<void> {
  const home = await makeHome();
  try {
    await standardLog(home);
    const lines = await readLines(home, DAY2);
    lines[2] = lines[2].slice(0, 30);
    await writeLines(home, DAY2, lines);
    const { writer } = await AuditWriter.open(home, { acceptBreak: true });
    writer.close();
    await work(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** Rewrites the break record (DAY2 line 9) with one change, keeping it valid JSON. */
async function editBreak(home: string, change: (record: BreakRecord) => void): Promise<void> {
  const lines = await readLines(home, DAY2);
  const record = JSON.parse(lines[8]) as BreakRecord;
  change(record);
  lines[8] = recordLine(record as unknown as Parameters<typeof recordLine>[0]);
  await writeLines(home, DAY2, lines);
}

interface BreakRecord {
  seq: number;
  time: string;
  prev: string;
  event: { type: "accepted_break"; file: string; line: number; last_good: string };
}

async function assertFailsAtLine3(home: string): Promise<void> {
  const report = await verifyHome(home);
  assertEquals([report.failure?.file, report.failure?.line], [DAY2, 3]);
  assertEquals(report.accepted_breaks, []);
}

Deno.test("an accepted break is reported by every later verify and is not a failure", () =>
  withAcceptedBreak(async (home) => {
    for (let i = 0; i < 2; i++) {
      const report = await verifyHome(home);
      assertEquals(report.failure, null);
      assertEquals(report.accepted_breaks, [{
        file: DAY2,
        line: 9,
        broke: { file: DAY2, line: 3 },
      }]);
    }
  }));

Deno.test("the break record carries the failure's file, line, last good hash, prev and seq", () =>
  withAcceptedBreak(async (home) => {
    const lines = await readLines(home, DAY2);
    const record = JSON.parse(lines[8]) as BreakRecord;
    assertEquals(record.event, {
      type: "accepted_break",
      file: DAY2,
      line: 3,
      last_good: lineHash(lines[1]),
    });
    assertEquals(record.prev, lineHash(lines[7]));
    assertEquals(record.seq, 7 + 6, "line 3 should have had seq 7; lines 3 to 8 are 6 lines");
  }));

Deno.test("an AcceptedBreak naming the wrong line is a failure", () =>
  withAcceptedBreak(async (home) => {
    await editBreak(home, (record) => (record.event.line = 4));
    await assertFailsAtLine3(home);
  }));

Deno.test("an AcceptedBreak with the wrong last_good is a failure", () =>
  withAcceptedBreak(async (home) => {
    await editBreak(home, (record) => (record.event.last_good = "1".repeat(64)));
    await assertFailsAtLine3(home);
  }));

Deno.test("an AcceptedBreak with the wrong prev is a failure", () =>
  withAcceptedBreak(async (home) => {
    await editBreak(home, (record) => (record.prev = "2".repeat(64)));
    await assertFailsAtLine3(home);
  }));

Deno.test("an AcceptedBreak with the wrong seq is a failure", () =>
  withAcceptedBreak(async (home) => {
    await editBreak(home, (record) => (record.seq = record.seq + 1));
    await assertFailsAtLine3(home);
  }));

Deno.test("a broken chain whose break record is wrong stops the next start as well", () =>
  withAcceptedBreak(async (home) => {
    await editBreak(home, (record) => (record.seq = record.seq - 1));
    const error = await assertRejects(() => AuditWriter.open(home), AuditChainBrokenError);
    assertEquals([error.file, error.line], [DAY2, 3]);
  }));

Deno.test("--accept-break with no failure is 'nothing to accept', exit status 2, and writes nothing", async () => {
  const home = await makeHome();
  try {
    await standardLog(home);
    // A torn tail is not a failure: it stays for the next plain start to recover.
    await Deno.writeTextFile(auditFile(home, DAY2), '{"seq":13', { append: true });
    const before = await Deno.readFile(auditFile(home, DAY2));
    const error = await assertRejects(
      () => AuditWriter.open(home, { acceptBreak: true }),
      AuditNothingToAcceptError,
      "nothing to accept",
    );
    assertEquals(error.exitStatus, 2);
    assert(error.message.endsWith("see runbook.md#audit-nothing-to-accept"), error.message);
    assertEquals(await Deno.readFile(auditFile(home, DAY2)), before);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("--accept-break ends a torn final line in the region with a newline before the break", async () => {
  const home = await makeHome();
  try {
    await standardLog(home);
    const lines = await readLines(home, DAY2);
    lines[2] = lines[2].slice(0, 30);
    await Deno.writeTextFile(
      auditFile(home, DAY2),
      lines.map((line) => `${line}\n`).join("") + '{"seq":13,"ti',
    );
    const { writer } = await AuditWriter.open(home, { acceptBreak: true });
    writer.close();
    const after = await readLines(home, DAY2);
    assertEquals(after[8], '{"seq":13,"ti');
    assertEquals(JSON.parse(after[9]).seq, 7 + 7);
    assertEquals((await verifyHome(home)).failure, null);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

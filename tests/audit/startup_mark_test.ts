/**
 * The writer's head mark (audit/.head, mod/audit/startup.ts): a start after a clean stop hashes the
 * newest file up to the mark and verifies only the lines after it; a file changed before the mark
 * is read again whole (tampering_test.ts proves each change still fails the start).
 */
import {
  AuditChainBrokenError,
  AuditWriter,
  checkAtStartup,
  sha256Hex,
  verifyHome,
} from "../../mod/audit/mod.ts";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import {
  auditFile,
  DAY2,
  readLines,
  sampleEvent,
  standardLog,
  steppingClock,
  withHome,
  writeLines,
} from "./helpers.ts";

Deno.test("a start after a clean stop verifies only the lines after the head mark, numbered as in the file", () =>
  withHome(async (home) => {
    await standardLog(home);
    const dir = `${home}/audit`;
    const mark = JSON.parse(await Deno.readTextFile(auditFile(home, ".head")));
    assertEquals([mark.file, mark.lines, mark.seq], [DAY2, 8, 12]);
    const clean = await checkAtStartup(dir, false);
    assertEquals(clean.report.records, 0, "no line before the mark is verified again");
    assertEquals(clean.report.next_seq, 13);
    assertEquals(
      clean.report.head,
      sha256Hex(new TextEncoder().encode((await readLines(home, DAY2))[7])),
    );
    // A writer that is killed (never closed) leaves the mark of its start; two records after it.
    const { writer } = await AuditWriter.open(home, {
      clock: steppingClock("2026-11-29T12:00:00.000Z"),
    });
    await writer.append(sampleEvent(13));
    await writer.append(sampleEvent(14));
    const after = await checkAtStartup(dir, false);
    assertEquals(after.report.records, 2);
    assertEquals(after.report.head_at, { file: DAY2, line: 10, seq: 14 });
    assertEquals(after.report.failure, null);
    await writer.close();
  }));

Deno.test("after the head mark, a torn line and a broken line are found at their own line numbers", () =>
  withHome(async (home) => {
    await standardLog(home);
    const path = auditFile(home, DAY2);
    await Deno.writeTextFile(path, '{"seq":13,"ti', { append: true });
    const torn = await checkAtStartup(`${home}/audit`, false);
    assert(torn.resumed);
    assertEquals(torn.report.torn_tail?.at, { file: DAY2, line: 9 });
    assertEquals(torn.report.torn_tail?.recovery_seq, 13);
    const lines = await readLines(home, DAY2);
    lines[8] = lines[1]; // a copy of line 2 as line 9: seq 6, not 13
    await writeLines(home, DAY2, lines);
    const broken = await checkAtStartup(`${home}/audit`, false);
    assertEquals([broken.report.failure?.file, broken.report.failure?.line], [DAY2, 9]);
    await assertRejects(() => AuditWriter.open(home), AuditChainBrokenError);
  }));

Deno.test("a head mark whose bytes no longer match (the file cut before it) is ignored: the file is read whole", () =>
  withHome(async (home) => {
    await standardLog(home);
    const lines = await readLines(home, DAY2);
    await writeLines(home, DAY2, lines.slice(0, 6));
    const report = await checkAtStartup(`${home}/audit`, false);
    assertEquals(report.report.failure, null);
    assertEquals(
      report.report.records,
      6,
      "the whole newest file, from the file before's last line",
    );
    assertEquals(report.report.next_seq, 11);
  }));

Deno.test("a start without a mark reads a file of more than one piece (4 MiB) and finds a changed byte at its line, as verifyHome does", () =>
  withHome(async (home) => {
    const { writer } = await AuditWriter.open(home, {
      clock: steppingClock("2026-11-29T00:00:00.000Z", 1),
    });
    for (let base = 0; base < 16_000; base += 2000) {
      await Promise.all(
        Array.from({ length: 2000 }, (_, i) => writer.append(sampleEvent(base + i))),
      );
    }
    await writer.close();
    const path = auditFile(home, DAY2);
    assert((await Deno.stat(path)).size > 4 * 1024 * 1024, "more than one piece");
    await Deno.remove(auditFile(home, ".head"));
    const clean = await checkAtStartup(`${home}/audit`, false);
    assertEquals(clean.report.head_at, { file: DAY2, line: 16_000, seq: 15_999 });
    assertEquals(clean.mark?.lines, 16_000);
    assertEquals(clean.mark?.bytes, (await Deno.stat(path)).size);
    const lines = await readLines(home, DAY2);
    const at = lines[14_999].indexOf('"call":"') + '"call":"'.length;
    lines[14_999] = `${lines[14_999].slice(0, at)}X${lines[14_999].slice(at + 1)}`;
    await writeLines(home, DAY2, lines);
    const broken = await checkAtStartup(`${home}/audit`, false);
    const verified = await verifyHome(home);
    assertEquals(
      [broken.report.failure?.line, broken.report.failure?.what],
      [verified.failure?.line, verified.failure?.what],
    );
    assert([15_000, 15_001].includes(broken.report.failure!.line), broken.report.failure?.what);
  }));

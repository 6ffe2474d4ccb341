/**
 * The audit log's edge cases (torn lines, empty files, a clock set back, breaks in older files),
 * each its own test through the writer's startup and verify (docs/audit.md#start-and-crashes).
 */
import { AuditWriter, recordLine, verifyHome } from "../../mod/audit/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  auditFile,
  DAY1,
  DAY2,
  readLines,
  sampleEvent,
  settableClock,
  standardLog,
  steppingClock,
  tearingOps,
  withHome,
  writeEvents,
} from "./helpers.ts";

/** Opens a writer, returns its notices and closes it. */
async function start(home: string, clock?: () => Date): Promise<string[]> {
  const { writer, notices } = await AuditWriter.open(home, { clock });
  writer.close();
  return notices;
}

/** The next record as the writer would write it, as text without its newline. */
async function nextLine(home: string, time: string): Promise<string> {
  const report = await verifyHome(home);
  return recordLine({
    seq: report.next_seq,
    time,
    prev: report.head ?? "0".repeat(64),
    event: sampleEvent(7),
  });
}

Deno.test("a torn tail that is complete JSON lacking only its newline is recovered, and the chain verifies", () =>
  withHome(async (home) => {
    await standardLog(home);
    const torn = await nextLine(home, "2026-11-29T00:00:05.000Z");
    await Deno.writeTextFile(auditFile(home, DAY2), torn, { append: true });
    const before = await verifyHome(home);
    assertEquals(before.failure, null);
    assertEquals(before.torn_tail?.at, { file: DAY2, line: 9 });
    assertEquals(before.torn_tail?.has_newline, false);
    const notices = await start(home);
    assertStringIncludes(notices.join("\n"), "recovered a torn final line");
    const lines = await readLines(home, DAY2);
    assertEquals(lines[8], torn, "the torn line is ended with a newline, not changed");
    assertEquals(JSON.parse(lines[9]).event.type, "recovery");
    assertEquals(JSON.parse(lines[9]).seq, 13, "the Recovery reuses the torn line's seq");
    const after = await verifyHome(home);
    assertEquals([after.failure, after.torn_tail, after.records], [null, null, 14]);
    assertEquals(after.recoveries, [{ file: DAY2, line: 9 }]);
    assertEquals(await start(home), [], "the next start has nothing to recover");
  }));

Deno.test("an unparseable last line that has its newline is recovered without a second newline", () =>
  withHome(async (home) => {
    await standardLog(home);
    const torn = (await nextLine(home, "2026-11-29T00:00:05.000Z")).slice(0, 40);
    await Deno.writeTextFile(auditFile(home, DAY2), `${torn}\n`, { append: true });
    assertEquals((await verifyHome(home)).torn_tail?.has_newline, true);
    await start(home);
    const text = await Deno.readTextFile(auditFile(home, DAY2));
    assert(!text.includes("\n\n"), "no empty line may appear");
    const lines = await readLines(home, DAY2);
    assertEquals([lines[8], JSON.parse(lines[9]).event.type], [torn, "recovery"]);
    const after = await verifyHome(home);
    assertEquals([after.failure, after.recoveries], [null, [{ file: DAY2, line: 9 }]]);
  }));

Deno.test("a torn first line of a file is recovered in that file and the chain verifies", () =>
  withHome(async (home) => {
    await writeEvents(home, 3, { clock: steppingClock("2026-11-28T12:00:00.000Z") });
    const day2 = steppingClock("2026-11-29T08:00:00.000Z");
    const torn = await AuditWriter.open(home, {
      clock: day2,
      fileOps: tearingOps((bytes) => bytes.length - 10),
    });
    await torn.writer.append(sampleEvent(3)).catch(() => undefined);
    torn.writer.close();
    assertEquals((await verifyHome(home)).torn_tail?.at, { file: DAY2, line: 1 });
    await start(home, day2);
    const report = await verifyHome(home);
    assertEquals(report.failure, null);
    assertEquals(report.recoveries, [{ file: DAY2, line: 1 }]);
    assertEquals(JSON.parse((await readLines(home, DAY2))[1]).event.type, "recovery");
  }));

Deno.test("an empty latest file is not a failure and the next record is its line 1", () =>
  withHome(async (home) => {
    await writeEvents(home, 3, { clock: steppingClock("2026-11-28T12:00:00.000Z") });
    await Deno.writeFile(auditFile(home, DAY2), new Uint8Array(), { mode: 0o600 });
    const report = await verifyHome(home);
    assertEquals([report.failure, report.torn_tail, report.records], [null, null, 3]);
    const { writer, notices } = await AuditWriter.open(home, {
      clock: steppingClock("2026-11-29T08:00:00.000Z"),
    });
    assertEquals(notices, []);
    await writer.append(sampleEvent(3));
    writer.close();
    assertEquals((await readLines(home, DAY2)).length, 1);
    const after = await verifyHome(home);
    assertEquals([after.failure, after.records], [null, 4]);
  }));

Deno.test("a clock stepped back over midnight writes to the latest file and gives one clock warning", () =>
  withHome(async (home) => {
    const time = settableClock("2026-11-29T00:00:01.000Z");
    const { writer } = await AuditWriter.open(home, { clock: time.clock });
    await writer.append(sampleEvent(0));
    time.set("2026-11-28T23:59:59.000Z");
    await writer.append(sampleEvent(1));
    await writer.append(sampleEvent(2));
    writer.close();
    const names = [...Deno.readDirSync(`${home}/audit`)].map((entry) => entry.name).sort();
    // .head: the writer's mark of where the next start resumes (mod/audit/startup.ts).
    assertEquals(names, [".head", ".lock", DAY2], "no record goes back to the older day's file");
    const report = await verifyHome(home);
    assertEquals(report.failure, null);
    assertEquals(report.clock_warnings, [{ file: DAY2, line: 2 }]);
  }));

Deno.test("a line torn on one day is recovered on the next in the torn line's file", () =>
  withHome(async (home) => {
    const day1 = steppingClock("2026-11-28T23:00:00.000Z");
    await writeEvents(home, 2, { clock: day1 });
    const torn = await AuditWriter.open(home, {
      clock: day1,
      fileOps: tearingOps(() => 30),
    });
    await torn.writer.append(sampleEvent(2)).catch(() => undefined);
    torn.writer.close();
    await start(home, steppingClock("2026-11-29T09:00:00.000Z"));
    const lines = await readLines(home, DAY1);
    assertEquals(JSON.parse(lines[3]).event.type, "recovery");
    assert(JSON.parse(lines[3]).time.startsWith("2026-11-29"), "the Recovery has today's time");
    assertEquals((await verifyHome(home)).recoveries, [{ file: DAY1, line: 3 }]);
    const names = [...Deno.readDirSync(`${home}/audit`)].map((entry) => entry.name);
    assert(!names.includes(DAY2), "no file is made for the Recovery's own date");
  }));

Deno.test("a break in an older file: plain start works, verify fails, --accept-break accepts, all verify after", () =>
  withHome(async (home) => {
    await standardLog(home);
    const lines = await readLines(home, DAY1);
    lines[2] = lines[2].slice(0, 30);
    await Deno.writeTextFile(auditFile(home, DAY1), lines.map((line) => `${line}\n`).join(""));
    assertEquals(await start(home), [], "an ordinary start reads only the latest file");
    const broken = await verifyHome(home);
    assertEquals([broken.failure?.file, broken.failure?.line], [DAY1, 3]);
    const { writer, notices } = await AuditWriter.open(home, { acceptBreak: true });
    writer.close();
    assertStringIncludes(notices.join("\n"), `accepted the break at ${home}/audit/${DAY1}:3`);
    const accepted = await verifyHome(home);
    assertEquals(accepted.failure, null);
    assertEquals(accepted.accepted_breaks, [{
      file: DAY2,
      line: 9,
      broke: { file: DAY1, line: 3 },
    }]);
    assertEquals(await start(home), [], "the next plain start accepts the break through resume");
    await writeEvents(home, 1, { clock: steppingClock("2026-11-29T10:00:00.000Z") });
    const later = await verifyHome(home);
    assertEquals([later.failure, later.accepted_breaks.length], [null, 1]);
  }));

Deno.test("two failures before one break record: the one break covers both", () =>
  withHome(async (home) => {
    await standardLog(home);
    const lines = await readLines(home, DAY2);
    lines[2] = lines[2].slice(0, 30);
    lines[5] = lines[5].replace('"seq":10,', '"seq":99,');
    await Deno.writeTextFile(auditFile(home, DAY2), lines.map((line) => `${line}\n`).join(""));
    const { writer } = await AuditWriter.open(home, { acceptBreak: true });
    writer.close();
    const report = await verifyHome(home);
    assertEquals(report.failure, null);
    assertEquals(report.accepted_breaks, [{ file: DAY2, line: 9, broke: { file: DAY2, line: 3 } }]);
  }));

Deno.test("a region holding a line with seq 18446744073709551615 does not change the break's seq", () =>
  withHome(async (home) => {
    await standardLog(home);
    const lines = await readLines(home, DAY2);
    lines[2] = lines[2].slice(0, 30);
    lines[4] = lines[4].replace('"seq":9,', '"seq":18446744073709551615,');
    await Deno.writeTextFile(auditFile(home, DAY2), lines.map((line) => `${line}\n`).join(""));
    const { writer } = await AuditWriter.open(home, { acceptBreak: true });
    writer.close();
    const breakRecord = JSON.parse((await readLines(home, DAY2))[8]);
    // Line 3 should have had seq 7; the region is lines 3 to 8: 7 + 6.
    assertEquals([breakRecord.event.type, breakRecord.seq], ["accepted_break", 13]);
    assertEquals((await verifyHome(home)).failure, null);
  }));

/**
 * The core's live index of the audit log: its report is verifyHome's, before and after records are
 * appended; a page of records, or a task's records, reads only its place in the log (bytes counted
 * through its readAt); an older file changed under it is read again, whole.
 */
import { AuditLogIndex, verifyHome } from "../../mod/audit/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { countingReader, event, logOf, summaryOf } from "./log_index_kit.ts";

Deno.test("the index reports what verifyHome reports, before and after more records are appended", async () => {
  const { home, writer } = await logOf(500, 200);
  try {
    const index = new AuditLogIndex(home);
    assertEquals(summaryOf(await index.summary()), summaryOf(await verifyHome(home)));
    await Promise.all([500, 501, 502].map((i) => writer.append(event(i))));
    // Decision 2 asked; its Approval now takes it off the report's abandoned list.
    await writer.append({
      type: "approval",
      session: "t1",
      call: "call-2",
      decision: 2,
      answer: "refused",
      by: "a test",
      reason: null,
      outcome: { outcome: "denied", reason: "approval_refused" },
      grant: null,
      grant_sha256: null,
      taint: "private",
      untrusted: false,
    });
    const after = await index.summary();
    assertEquals(summaryOf(after), summaryOf(await verifyHome(home)));
    assertEquals(after.records, 504);
    assert(!after.abandoned.includes(2), "decision 2 was answered");
  } finally {
    writer.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("with 100k records, a page of 50 reads under 256 KiB, and a view after an append reads only the new bytes", async () => {
  const { home, writer } = await logOf(100_000, 40_000);
  try {
    const reader = countingReader();
    const index = new AuditLogIndex(home, { readAt: reader.readAt });
    await index.refresh();
    let logBytes = 0;
    for await (const entry of Deno.readDir(`${home}/audit`)) {
      if (entry.name.endsWith(".jsonl")) {
        logBytes += (await Deno.stat(`${home}/audit/${entry.name}`)).size;
      }
    }
    assertEquals(reader.bytes(), logBytes, "the first refresh reads the log once");

    reader.reset();
    const page = await index.records({ from: 61_234, limit: 50 });
    assertEquals(
      page.records.map((record) => record.seq),
      Array.from({ length: 50 }, (_, i) => 61_234 + i),
    );
    assertEquals(page.nextSeq, 100_000);
    assert(reader.bytes() < 256 * 1024, `a page read ${reader.bytes()} bytes of ${logBytes}`);

    reader.reset();
    const last = await index.records({ from: 99_990, limit: 50 });
    assertEquals(last.records.length, 10);
    assert(reader.bytes() < 256 * 1024, `the last page read ${reader.bytes()} bytes`);

    const appended = await writer.append(event(100_000));
    reader.reset();
    const summary = await index.summary();
    assertEquals([summary.records, summary.head_at?.seq], [100_001, appended.seq]);
    assert(reader.bytes() < 4096, `a summary after one append read ${reader.bytes()} bytes`);

    reader.reset();
    const tasks = await index.taskRecords("t3");
    assertEquals(tasks.length, 500, "the newest 500 records of the task");
    assert(tasks.every((record) => (record.event as { task?: string }).task === "t3"));
    assertEquals(
      tasks[499].seq,
      [...Array(100_001).keys()].filter((i) => i % 3 === 0 && i % 7 === 3).at(-1),
    );
    assert(reader.bytes() < 256 * 1024, `a task's records read ${reader.bytes()} bytes`);
  } finally {
    writer.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("an older file changed under the index is read again, whole, and the break reported", async () => {
  const { home, writer } = await logOf(300, 100);
  try {
    const index = new AuditLogIndex(home);
    assertEquals((await index.summary()).failure, null);
    const names = [...Deno.readDirSync(`${home}/audit`)].map((entry) => entry.name)
      .filter((name) => name.endsWith(".jsonl")).sort();
    const first = `${home}/audit/${names[0]}`;
    const text = await Deno.readTextFile(first);
    // Line 2 of the first file: one digit of a vault_set record's key name.
    await Deno.writeTextFile(first, text.replace('"KEY_1"', '"KEY_9"'));
    const report = await index.summary();
    assertEquals(report.failure?.file, names[0]);
    assertEquals(report.failure?.line, 3, "line 3's prev no longer matches line 2");
    assertEquals(summaryOf(report), summaryOf(await verifyHome(home)));
  } finally {
    writer.close();
    await Deno.remove(home, { recursive: true });
  }
});

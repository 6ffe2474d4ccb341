/**
 * The audit log index kept on disk (audit/.index): a core started again goes on from what the last
 * one read, reading only the newest file (hashed, in pieces) and what was appended since, with the
 * same report, pages and task records as an index that read the whole log; a byte changed before
 * where it stopped is found as verifyHome finds it.
 */
import { AuditLogIndex, verifyHome } from "../../mod/audit/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { countingReader, event, logOf, summaryOf } from "./log_index_kit.ts";

Deno.test("an index started again reads the newest file and what was appended, not the older files, and answers as one that read it all", async () => {
  const { home, writer } = await logOf(3000, 1000);
  try {
    const first = new AuditLogIndex(home);
    await first.refresh();
    await first.close();
    await Promise.all([3000, 3001, 3002].map((i) => writer.append(event(i))));
    const reader = countingReader();
    const again = new AuditLogIndex(home, { readAt: reader.readAt });
    const summary = await again.summary();
    assertEquals(summaryOf(summary), summaryOf(await verifyHome(home)));
    assertEquals(summary.records, 3003);
    const newest = (await Deno.stat(`${home}/audit/2026-11-03.jsonl`)).size;
    assert(
      reader.bytes() <= newest + 4096,
      `read ${reader.bytes()} bytes, the newest file is ${newest}`,
    );
    // While it holds audit/.index, a second index reads the whole log and keeps it in memory.
    const whole = new AuditLogIndex(home);
    assertEquals(
      await again.records({ from: 1234, limit: 20 }),
      await whole.records({ from: 1234, limit: 20 }),
    );
    assertEquals(await again.records({ limit: 5 }), await whole.records({ limit: 5 }));
    const tasks = await again.taskRecords("t3");
    assertEquals(tasks, await whole.taskRecords("t3"));
    assertEquals(tasks.length, 143);
    await whole.close();
    await again.close();
  } finally {
    writer.close();
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a byte of the newest file changed before where the last index stopped is found at its line, as verifyHome finds it", async () => {
  const { home, writer } = await logOf(600, 1000);
  await writer.close();
  try {
    const first = new AuditLogIndex(home);
    await first.refresh();
    await first.close();
    const path = `${home}/audit/2026-11-01.jsonl`;
    const text = await Deno.readTextFile(path);
    const at = text.indexOf('"call":"call-302"') + '"call":"call-'.length;
    await Deno.writeTextFile(path, `${text.slice(0, at)}9${text.slice(at + 1)}`);
    const again = new AuditLogIndex(home);
    const summary = await again.summary();
    assertEquals(summaryOf(summary), summaryOf(await verifyHome(home)));
    assertEquals(summary.failure?.line, 304);
    await again.close();
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

/**
 * A call's tool.result line and its Result record are synced together. No answer may go out, now
 * or after a restart, without its Result record on disk: the line is held until both are, voided
 * at once when the record fails, and voided at the next start when a crash lost the record.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { realFileOps, verifyHome } from "../../mod/audit/mod.ts";
import { counter, grant, type Json, startBox, until, withBox } from "../kit/mod.ts";

const COUNT = { count: grant({ tool: "test.count" }) };
const AUDIT_DOWN = "Denied: the audit log cannot be written; the owner has been told.";

async function journal(home: string, task: string): Promise<Json[]> {
  const text = await Deno.readTextFile(`${home}/tasks/${task}/journal.jsonl`).catch(() => "");
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

/** Removes the last line of the latest audit file: a record whose write never reached the disk. */
async function loseLastRecord(home: string): Promise<Json> {
  const files = [...Deno.readDirSync(`${home}/audit`)].map((e) => e.name)
    .filter((name) => name.endsWith(".jsonl")).sort();
  const path = `${home}/audit/${files[files.length - 1]}`;
  const lines = (await Deno.readTextFile(path)).split("\n").filter((line) => line !== "");
  const lost = JSON.parse(lines.pop()!);
  await Deno.writeTextFile(path, lines.map((line) => `${line}\n`).join(""));
  return lost;
}

Deno.test("a result line on disk whose Result record was lost is voided at the next start; the call runs afresh, and only once", async () => {
  const { runs, tool } = counter();
  await withBox({ grants: COUNT, tools: [tool as never] }, async (box) => {
    const task = await box.startTask({ tools: ["test.count"] });
    assertEquals(await task.call("test.count", { n: 1 }, "k1"), { ok: true, output: { runs: 1 } });
    const line = (await journal(box.home, task.id)).find((l) => l.type === "tool.result");
    let lost: Json = null;
    await box.restart({ whileDown: async () => (lost = await loseLastRecord(box.home)) });
    assertEquals(lost.event.type, "result");
    assertEquals(lost.event.call, "k1");
    assertEquals(line.result, lost.seq, "the result line names its Result record");
    const voids = (await journal(box.home, task.id)).filter((l) => l.type === "tool.unrecorded");
    assertEquals(voids.map((l) => [l.key, l.result]), [["k1", lost.seq]]);
    assert(box.core.notices.some((n) => n.includes(`Result record (seq ${lost.seq})`)));

    // Decided afresh: it runs again, and its new Decision record takes the lost record's seq.
    assertEquals(await task.call("test.count", { n: 1 }, "k1"), { ok: true, output: { runs: 2 } });
    assertEquals(runs.length, 2);
    const records = await box.records();
    assertEquals(records.find((r) => r.seq === lost.seq).event.type, "decision");
    const results = records.filter((r) => r.event.type === "result");
    assertEquals(results.map((r) => [r.event.call, r.event.decision]), [["k1", lost.seq]]);
    assertEquals((await verifyHome(box.home)).failure, null);

    // That seq is on disk now: a second start must not bring the voided line back, nor void the
    // new one, and the key keeps its second answer without a third run.
    await box.restart();
    assertEquals(await task.call("test.count", { n: 1 }, "k1"), { ok: true, output: { runs: 2 } });
    assertEquals(runs.length, 2);
    const after = await journal(box.home, task.id);
    assertEquals(after.filter((l) => l.type === "tool.unrecorded").length, 1);
    assert(!box.core.notices.some((n) => n.includes("Result record")));
  });
});

Deno.test("a Result record that cannot be written: its result line is voided at once, the key never answers its content, and after a restart it runs afresh", async () => {
  const { runs, tool } = counter();
  let failResults = true;
  const box = await startBox({
    grants: COUNT,
    tools: [tool as never],
    fileOps: {
      async write(file, bytes) {
        if (failResults && new TextDecoder().decode(bytes).includes('"type":"result"')) {
          throw new Error("disk full (test)");
        }
        await realFileOps.write(file, bytes);
      },
    },
  });
  try {
    const task = await box.startTask({ tools: ["test.count"] });
    assertEquals(await task.call("test.count", { n: 1 }, "k1"), {
      ok: false,
      error: "the result could not be recorded",
    });
    assertEquals(runs.length, 1);
    const lines = await journal(box.home, task.id);
    const result = lines.find((l) => l.type === "tool.result");
    const voided = lines.find((l) => l.type === "tool.unrecorded");
    assertEquals(
      result.answer,
      { ok: true, output: { runs: 1 } },
      "the line was written beside it",
    );
    assertEquals([voided.key, voided.result], ["k1", result.result]);
    // The key is not answered with the content: the box refuses every call until restarted.
    assertEquals(await task.call("test.count", { n: 1 }, "k1"), { ok: false, error: AUDIT_DOWN });

    failResults = false;
    await box.restart();
    assertEquals(await task.call("test.count", { n: 1 }, "k1"), { ok: true, output: { runs: 2 } });
    assertEquals(runs.length, 2);
    assertEquals((await verifyHome(box.home)).failure, null);
  } finally {
    await box.close();
  }
});

Deno.test("the same key asked again while its Result record is being synced waits for the record, though the result line is on disk", async () => {
  const { runs, tool } = counter();
  let resultWritten = false;
  const gate = Promise.withResolvers<void>();
  const box = await startBox({
    grants: COUNT,
    tools: [tool as never],
    fileOps: {
      async write(file, bytes) {
        if (new TextDecoder().decode(bytes).includes('"type":"result"')) resultWritten = true;
        await realFileOps.write(file, bytes);
      },
      async syncData(file) {
        if (resultWritten) await gate.promise; // the Result record's sync, held by the test
        await file.syncData();
      },
    },
  });
  try {
    const task = await box.startTask({ tools: ["test.count"] });
    const first = task.call("test.count", { n: 1 }, "k1");
    await until(async () =>
      (await journal(box.home, task.id)).some((l) => l.type === "tool.result")
    );
    // Give the journal's sync time to finish: the line is on disk, the record is not.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = task.send("test.count", { n: 1 }, "k1");
    // The second request has reached the broker once it waits on the call in flight (or, wrongly,
    // once it has answered): then it is seen not to answer while the record is not on disk.
    const flight = box.core.tasks.handle(task.id)?.callsByKey.get("k1");
    assert(flight !== undefined, "the first call is in flight");
    await until(() => flight.waiters === 2 || second.answered());
    assertEquals(second.answered(), false, "answered before its Result record was on disk");
    gate.resolve();
    assertEquals(await first, { ok: true, output: { runs: 1 } });
    assertEquals(await second.answer, { ok: true, output: { runs: 1 } });
    assertEquals(runs.length, 1);
    const results = (await box.records()).filter((r) => r.event.type === "result");
    assertEquals(results.length, 1);
    assertStringIncludes(
      JSON.stringify(await journal(box.home, task.id)),
      `"result":${results[0].seq}`,
    );
  } finally {
    gate.resolve(); // a failed assertion must not leave the core waiting on the held sync
    await box.close();
  }
});

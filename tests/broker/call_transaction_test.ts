/**
 * A call is one transaction (docs/audit.md#the-order-of-one-calls-writes), through a real core
 * whose audit writer's fdatasync of the Result record is held on demand: the call is answered, and
 * its reserved cents given back, only once its Result record is on disk; a key sent twice runs its
 * tool once.
 */
import { type AuditFileOps, realFileOps } from "../../mod/audit/mod.ts";
import { assertEquals } from "../assert.ts";
import { grant, heldTool, type Json, pendingApproval, startBox, until } from "../kit/mod.ts";

const GRANTS = { spend: grant({ tool: "test.spend6" }) };

/** Audit file operations that hold every sync once a Result record has been written. */
function holdResultSync(): {
  ops: Partial<AuditFileOps>;
  written: () => boolean;
  release: () => void;
} {
  let written = false;
  const gate = Promise.withResolvers<void>();
  return {
    ops: {
      async write(file, bytes) {
        if (new TextDecoder().decode(bytes).includes('"type":"result"')) written = true;
        await realFileOps.write(file, bytes);
      },
      async syncData(file) {
        if (written) await gate.promise;
        await realFileOps.syncData(file);
      },
    },
    written: () => written,
    release: () => gate.resolve(),
  };
}

Deno.test("a call is answered, and gives its reserved cents back, only once its Result record is on disk: a call over budget meanwhile becomes a budget approval", async () => {
  const tool = heldTool("test.spend6");
  tool.gate.resolve(); // runs at once
  const hold = holdResultSync();
  const box = await startBox({ grants: GRANTS, tools: [tool.tool], fileOps: hold.ops });
  try {
    const task = await box.startTask({ tools: ["test.spend6"], budgetCents: 10 });
    const first = task.send("test.spend6", { n: 1 }, "a");
    await until(() => hold.written()); // the tool ran; its Result record's sync is held
    const second = task.call("test.spend6", { n: 2 }, "b");
    // Nothing can be awaited for what must not happen, and the second call's Decision record
    // cannot be written while the sync is held: give it time to be decided, and the first to
    // answer if it did not wait.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assertEquals(first.answered(), false, "answered before its Result record was on disk");

    hold.release();
    assertEquals(await first.answer, { ok: true, output: { n: 1 } });
    // 6 reserved (or 6 spent) + 6 asked > 10, whenever the second call was decided.
    const id = await pendingApproval(box, task);
    const decision = (await box.records()).find((r) => r.seq === id);
    assertEquals([decision.event.call, decision.event.outcome], ["b", { outcome: "ask" }]);
    assertEquals(tool.started, [1], "the second call ran on cents the first had not paid yet");
    assertEquals((await box.admin("POST", `/approvals/${id}/refuse`)).status, 200);
    assertEquals(await second, { ok: false, error: "not approved" });
    assertEquals((await task.request("GET", "/task")).body.task.spentCents, 6);
  } finally {
    hold.release();
    await box.close();
  }
});

Deno.test("a key sent twice while its call runs: the tool runs once, both answer the same, one Decision and one Result record, charged once", async () => {
  const tool = heldTool("test.spend6");
  const box = await startBox({ grants: GRANTS, tools: [tool.tool] });
  try {
    const task = await box.startTask({ tools: ["test.spend6"], budgetCents: 100 });
    const first = task.call("test.spend6", { n: 1 }, "k");
    await until(() => tool.started.length === 1);
    const second = task.call("test.spend6", { n: 1 }, "k");
    tool.gate.resolve();
    assertEquals(await first, { ok: true, output: { n: 1 } });
    assertEquals(await second, { ok: true, output: { n: 1 } });
    assertEquals(await task.call("test.spend6", { n: 1 }, "k"), { ok: true, output: { n: 1 } });
    assertEquals(tool.started, [1]);
    const records = (await box.records()).filter((r: Json) => r.event.call === "k");
    assertEquals(records.map((r: Json) => r.event.type), ["decision", "result"]);
    assertEquals((await task.request("GET", "/task")).body.task.spentCents, 6);
    const lines = (await Deno.readTextFile(`${box.home}/tasks/${task.id}/journal.jsonl`))
      .split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    assertEquals(lines.map((l) => `${l.type} ${l.key}`), ["tool.call k", "tool.result k"]);
  } finally {
    tool.gate.resolve();
    await box.close();
  }
});

/**
 * An allowed call runs only once its Decision record is on disk
 * (docs/audit.md#the-order-of-one-calls-writes), through a real core whose audit writer's fdatasync
 * of the Decision record fails, or hangs, on demand (the writer's injectable file operations).
 */
import { type AuditFileOps, realFileOps } from "../../mod/audit/mod.ts";
import { denialText } from "../../mod/policy/mod.ts";
import { assertEquals } from "../assert.ts";
import { counter, grant, startBox, until, withBox } from "../kit/mod.ts";

const COUNT = { count: grant({ tool: "test.count" }) };

/**
 * File operations whose fdatasync of a batch holding a Decision record runs `onDecisionSync`
 * instead of syncing at once; `synced` counts the Decision syncs started.
 */
function decisionSync(
  onDecisionSync: (file: Deno.FsFile) => Promise<void>,
): { ops: Partial<AuditFileOps>; started: () => number } {
  let lastHeldDecision = false;
  let started = 0;
  return {
    ops: {
      async write(file, bytes) {
        lastHeldDecision = new TextDecoder().decode(bytes).includes('"type":"decision"');
        await realFileOps.write(file, bytes);
      },
      async syncData(file) {
        if (!lastHeldDecision) return await realFileOps.syncData(file);
        started++;
        await onDecisionSync(file);
      },
    },
    started: () => started,
  };
}

Deno.test("a Decision record whose fdatasync fails: the call answers audit_unavailable and the tool never runs", async () => {
  const { runs, tool } = counter();
  const sync = decisionSync(() => Promise.reject(new Error("I/O error (test)")));
  await withBox({ grants: COUNT, tools: [tool], fileOps: sync.ops }, async (box) => {
    const task = await box.startTask({ tools: ["test.count"] });
    assertEquals(await task.call("test.count", { n: 1 }, "k1"), {
      ok: false,
      error: denialText("audit_unavailable"),
    });
    assertEquals(sync.started(), 1);
    assertEquals(runs.length, 0, "the tool ran though its Decision record never reached the disk");
    const journal = await Deno.readTextFile(`${box.home}/tasks/${task.id}/journal.jsonl`)
      .catch(() => "");
    assertEquals(journal.includes('"tool.call"'), false, "a tool.call line was written");
  });
});

Deno.test("a Decision record whose fdatasync hangs: the call waits and the tool does not run until the sync returns", async () => {
  const { runs, tool } = counter();
  const gate = Promise.withResolvers<void>();
  const sync = decisionSync(async (file) => {
    await gate.promise;
    await realFileOps.syncData(file);
  });
  const box = await startBox({ grants: COUNT, tools: [tool], fileOps: sync.ops });
  try {
    const task = await box.startTask({ tools: ["test.count"] });
    const sent = task.send("test.count", { n: 1 }, "k1");
    await until(() => sync.started() === 1); // the record is written, its sync is held
    // Nothing can be awaited for what must not happen: give a run that did not wait time to show.
    await new Promise((resolve) => setTimeout(resolve, 200));
    assertEquals(runs.length, 0, "the tool ran while its Decision record was not yet on disk");
    assertEquals(sent.answered(), false);

    gate.resolve();
    assertEquals(await sent.answer, { ok: true, output: { runs: 1 } });
    assertEquals(runs.length, 1);
  } finally {
    gate.resolve();
    await box.close();
  }
});

/**
 * A task stopped while its own worker waits on the owner: the worker's process dies with the task,
 * and its pending approval is still closed as denied, answered by `task ended`, in the audit log
 * (docs/grants.md#approvals), not left for `gurt audit verify` as pending or abandoned.
 */
import { assertEquals } from "../assert.ts";
import { startScriptTask, taskEnd, until, withBox } from "../kit/mod.ts";

Deno.test("stopping a task whose worker waits on an /ask records the approval as refused by task ended", async () => {
  await withBox({}, async (box) => {
    const ask = `{"question":"may I?","key":"k1"}`;
    const { id } = await startScriptTask(
      box,
      `curl -s --unix-socket "$BOX_SOCKET" -H 'content-type: application/json' -d '${ask}' http://box/ask`,
    );
    let approval = -1;
    await until(async () => {
      const items = (await box.admin("GET", "/approvals")).body.items as {
        approval: number;
        task: string;
      }[];
      approval = items.find((item) => item.task === id)?.approval ?? -1;
      return approval !== -1;
    }, 30_000);
    assertEquals((await box.admin("POST", `/tasks/${id}/stop`)).status, 200);
    await taskEnd(box, id);
    const answers = (await box.records())
      .filter((r) => r.event.type === "approval")
      .map((r) => [r.event.decision, r.event.answer, r.event.by]);
    assertEquals(answers, [[approval, "refused", "task ended"]]);
  });
});

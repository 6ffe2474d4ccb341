/**
 * A restart closes the approvals that were open (the table is in memory): the next start says how
 * many, and for which tasks, once. The list is on disk while the core runs, so a crash leaves it
 * for the next start as a stop does. Through a real core and its sockets.
 */
import { assert, assertEquals } from "../assert.ts";
import { until, withBox } from "../kit/mod.ts";

Deno.test("the start after a restart that closed approvals says how many, per task, once", async () => {
  await withBox({}, async (box) => {
    const one = await box.startTask();
    const two = await box.startTask();
    for (const [task, key] of [[one, "a"], [one, "b"], [two, "c"]] as const) {
      const answer = await task.request("POST", "/ask", { question: key, key, waitMs: 0 });
      assertEquals(answer.body.pending, true);
    }
    // On disk while it runs: a crash would leave it too.
    const path = `${box.home}/run/approvals-open.json`;
    await until(async () => {
      const text = await Deno.readTextFile(path).catch(() => "[]");
      return JSON.parse(text).length === 3;
    });
    assert(!box.core.notices.some((line) => line.includes("the restart closed")));

    await box.restart();
    const said = box.core.notices.filter((line) => line.includes("the restart closed"));
    assertEquals(said, [
      `gurt serve: the restart closed 3 approvals left open when gurt serve stopped (${one.id}: 2, ${two.id}: 1); their tasks ask again; see runbook.md#approvals-closed-at-restart`,
    ]);
    assertEquals((await box.admin("GET", "/approvals")).body.items, []);

    await box.restart();
    assert(!box.core.notices.some((line) => line.includes("the restart closed")));
  });
});

/**
 * A worker's /ask key names one question
 * (docs/broker-api.md#keys-the-same-request-the-same-answer): asked again once answered, before or
 * after a restart of the core, it gets the same answer from the task's journal, with no new
 * approval and no new audit record. Through a real core and its real sockets.
 */
import { assertEquals } from "../assert.ts";
import { type Json, pendingApproval, type TestTask, withBox } from "../kit/mod.ts";

/** Asks again with an answered key; it must be answered at once, not wait on a new approval. */
async function askAgain(task: TestTask, key: string): Promise<Json> {
  const body = { question: "May I pay the invoice?", key };
  try {
    return (await task.request("POST", "/ask", body, AbortSignal.timeout(5000))).body;
  } catch (error) {
    throw new Error(`the answered /ask key ${key} was not answered at once: ${error}`);
  }
}

Deno.test("an answered /ask key asked again, also after a restart, gets the same answer with no new approval and no new audit record", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    const ask = (key: string) =>
      task.request("POST", "/ask", { question: "May I pay the invoice?", key });

    const yes = ask("q-yes");
    const yesId = await pendingApproval(box, task);
    assertEquals((await box.admin("POST", `/approvals/${yesId}/approve`)).status, 200);
    assertEquals((await yes).body, { approved: true });
    const no = ask("q-no");
    const noId = await pendingApproval(box, task);
    assertEquals((await box.admin("POST", `/approvals/${noId}/refuse`)).status, 200);
    assertEquals((await no).body, { approved: false });
    const recorded = await box.records();
    assertEquals(
      recorded.filter((r) => r.event.type !== "task_started").map((r) => [r.event.type, r.seq]),
      [["decision", yesId], ["approval", yesId + 1], ["decision", noId], ["approval", noId + 1]],
    );

    assertEquals(await askAgain(task, "q-yes"), { approved: true });
    assertEquals(await askAgain(task, "q-no"), { approved: false });
    assertEquals((await box.admin("GET", "/approvals")).body.items, []);
    assertEquals(await box.records(), recorded, "asking again wrote to the audit log");

    await box.restart();
    const afterRestart = await box.records();
    assertEquals(await askAgain(task, "q-yes"), { approved: true });
    assertEquals(await askAgain(task, "q-no"), { approved: false });
    assertEquals((await box.admin("GET", "/approvals")).body.items, []);
    assertEquals(await box.records(), afterRestart, "asking again after a restart wrote a record");
  });
});

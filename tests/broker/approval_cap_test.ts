/**
 * A task may have at most `[approvals] max_per_task` approvals open: one more /ask or asking /call
 * is answered 429 with a sentence and the runbook's pointer, before any Decision record, while
 * another task still asks; once the owner answers one, the task may ask again. Through a real core.
 */
import { assert, assertEquals } from "../assert.ts";
import { counter, withBox } from "../kit/mod.ts";
import { loadConfig } from "../../mod/config/mod.ts";

const FULL =
  "this task has 3 approvals waiting for the owner, its limit ([approvals] max_per_task); it may ask again once the owner has answered some or they have expired; see runbook.md#approvals-per-task";

Deno.test("a task past [approvals] max_per_task is answered 429 for one more ask or asking call, and no record is written", async () => {
  const count = counter("ask");
  await withBox({ ...count.options, toml: "[approvals]\nmax_per_task = 3\n" }, async (box) => {
    const task = await box.startTask({ tools: ["test.count"] });
    const other = await box.startTask({ tools: ["test.count"] });
    for (const key of ["a1", "a2"]) {
      const answer = await task.request("POST", "/ask", { question: key, key, waitMs: 0 });
      assertEquals(answer.body.pending, true, JSON.stringify(answer.body));
    }
    const call = await task.request("POST", "/call", {
      tool: "test.count",
      input: { n: 1 },
      key: "c1",
      waitMs: 0,
    });
    assertEquals(call.body.pending, true, JSON.stringify(call.body));
    const decisions = (await box.records()).filter((r) => r.event.type === "decision").length;

    const ask = await task.request("POST", "/ask", { question: "a4", key: "a4", waitMs: 0 });
    assertEquals(ask, { status: 429, body: { error: FULL } });
    const more = await task.request("POST", "/call", {
      tool: "test.count",
      input: { n: 2 },
      key: "c2",
      waitMs: 0,
    });
    assertEquals(more, { status: 429, body: { error: FULL } });
    assertEquals(
      (await box.records()).filter((r) => r.event.type === "decision").length,
      decisions,
    );
    assertEquals((await box.admin("GET", "/approvals")).body.items.length, 3);

    // Another task is not held back by this one's.
    const theirs = await other.request("POST", "/ask", { question: "b1", key: "b1", waitMs: 0 });
    assertEquals(theirs.body.pending, true);

    // The owner answers one: the task may ask again.
    const first = (await box.admin("GET", "/approvals")).body.items[0].approval;
    assertEquals((await box.admin("POST", `/approvals/${first}/refuse`)).status, 200);
    const again = await task.request("POST", "/ask", { question: "a4", key: "a4", waitMs: 0 });
    assertEquals(again.body.pending, true, JSON.stringify(again.body));
    assertEquals(count.runs, []);
  });
});

Deno.test("[approvals] max_per_task is 32 unless gurt.toml says otherwise", () => {
  const home = Deno.makeTempDirSync();
  try {
    const config = loadConfig({ home, env: {}, root: false });
    assertEquals(config.approvals.max_per_task, 32);
    assert(config.approvals.max_per_task > 0);
  } finally {
    Deno.removeSync(home, { recursive: true });
  }
});

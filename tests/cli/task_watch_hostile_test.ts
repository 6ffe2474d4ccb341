/**
 * `gurt task watch` against a hostile task (the review of issue 34): a step's `data` is the task's
 * to choose, so a malformed loop transcript must not stop the owner's watch, and a step of empty
 * lines (30000 of them fit in the 64 KiB a step may be) is cut like any other long text.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  gurt,
  gurtCommand,
  pendingApproval,
  readUntil,
  type TestBox,
  withBox,
} from "../kit/mod.ts";
import { SHOWN_JOURNAL_LINES } from "../../mod/owner/task_main.ts";

/** Runs `gurt task watch ID --say` until its output holds `core`, then stops the task. */
async function watchUntil(
  box: TestBox,
  task: { id: string },
  core: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const watch = gurtCommand(["--home", box.home, "task", "watch", task.id, "--say"]).spawn();
  // A watch that never shows `core` is stopped, so the test fails and does not hang.
  const guard = setTimeout(() => watch.kill("SIGKILL"), 60_000);
  const stderr = new Response(watch.stderr).text();
  const read = await readUntil(watch.stdout, (text) => text.includes(core));
  await box.admin("POST", `/tasks/${task.id}/stop`);
  const status = await watch.status;
  clearTimeout(guard);
  return { code: status.code, stdout: read.text + await read.rest, stderr: await stderr };
}

Deno.test("gurt task watch --say: a step whose loop transcript is malformed does not stop the watch; the approval after it is shown", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    const hostile: unknown[] = [
      { loop: null },
      { loop: { messages: 5 } },
      { loop: { messages: [null, 7, "x"] } },
      { loop: { messages: [{ role: "assistant", calls: {} }] } },
      { loop: { messages: [{ role: "assistant", calls: [null, 3] }] } },
      { loop: { messages: [{ role: "assistant", calls: "abc" }] } },
    ];
    for (const data of hostile) {
      const step = await task.request("POST", "/step", { text: "hm", data });
      assertEquals(step.status, 200, JSON.stringify(step.body));
    }
    await task.request("POST", "/ask", { key: "q1", question: "may I?", waitMs: 1 });
    const id = await pendingApproval(box, task);
    const shown = await watchUntil(box, task, `${id}  just now  `);
    assertEquals(shown.stderr, "");
    assertEquals(shown.code, 1, shown.stdout);
    assertStringIncludes(shown.stdout, `[question ${id}: may I?]`);
    assertStringIncludes(shown.stdout, `task ${task.id} ended: stopped`);
  });
});

Deno.test("gurt task watch --say: a step of 30000 newlines is cut like any long text, not printed as 30000 lines", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    const step = await task.request("POST", "/step", { text: `a${"\n".repeat(30_000)}b` });
    assertEquals(step.status, 200, JSON.stringify(step.body));
    await task.request("POST", "/ask", { key: "q1", question: "may I?", waitMs: 1 });
    const id = await pendingApproval(box, task);
    const shown = await watchUntil(box, task, `${id}  just now  `);
    const lines = shown.stdout.split("\n");
    assert(lines.length < 2100, `the watch printed ${lines.length} lines`);
    assertStringIncludes(shown.stdout, "more characters]");
  });
});

Deno.test("gurt task show: a task of 1000 steps shows its newest 200 journal lines and how many came before", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    for (let i = 0; i < 1000; i++) await task.request("POST", "/step", { text: `step ${i}` });
    const shown = await gurt(["--home", box.home, "task", "show", task.id]);
    assertEquals(shown.code, 0, shown.stderr);
    const journal = shown.stdout.slice(shown.stdout.indexOf("journal:\n") + 9).trimEnd().split(
      "\n",
    );
    assertEquals(journal.length, 1 + SHOWN_JOURNAL_LINES, `${journal.length} journal lines`);
    assertEquals(
      journal[0],
      `  (800 earlier lines not shown; gurt task watch ${task.id} --json prints every line)`,
    );
    assert(journal[1].endsWith(" step step 800"), journal[1]);
    assert(journal.at(-1)!.endsWith(" step step 999"), journal.at(-1));
  });
});

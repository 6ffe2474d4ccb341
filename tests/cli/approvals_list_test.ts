/**
 * `gurt approvals` against a task that asks and asks (the review of issue 36 in the CLI): the list
 * shows each task's oldest 3 blocks and how many more it has, so one task's 32 approvals of 4,000
 * characters each cannot scroll another task's off the owner's screen; `--task` lists them all.
 */
import { assertEquals } from "../assert.ts";
import { gurt, until, withBox } from "../kit/mod.ts";

Deno.test("gurt approvals: another task's approval stays on a short list however many one task asks; --task lists every one of that task's", async () => {
  await withBox({}, async (box) => {
    const other = await box.startTask();
    await other.request("POST", "/ask", { key: "q0", question: "may I pay the baker?", waitMs: 1 });
    const flood = await box.startTask();
    for (let i = 0; i < 10; i++) {
      const asked = await flood.request("POST", "/ask", {
        key: `q${i}`,
        question: `question ${i} ${"x".repeat(3000)}`,
        waitMs: 1,
      });
      assertEquals(asked.body.pending, true, JSON.stringify(asked.body));
    }
    await until(async () => (await box.admin("GET", "/approvals")).body.items.length === 11);

    const listed = await gurt(["--home", box.home, "approvals"]);
    assertEquals(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trimEnd().split("\n");
    // The other task's block, the flood's oldest 3, and the line of how many more it has.
    assertEquals(lines.length, 2 + 3 * 2 + 1, listed.stdout.slice(0, 2000));
    assertEquals(lines[1], '    box.ask {"question":"may I pay the baker?"}');
    assertEquals(lines.at(-1), `7 more from task ${flood.id}: gurt approvals --task ${flood.id}`);

    const all = await gurt(["--home", box.home, "approvals", "--task", flood.id]);
    assertEquals(all.code, 0, all.stderr);
    assertEquals(all.stdout.trimEnd().split("\n").length, 10 * 2);
    const none = await gurt(["--home", box.home, "approvals", "--task", "tnothing"]);
    assertEquals(none.stdout, "no approvals pending for task tnothing\n");
  });
});

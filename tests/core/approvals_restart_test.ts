/**
 * A restart opens again the approvals that were open (docs/grants.md#approvals): the core keeps its
 * table in run/approvals-open.json as it changes, so a crash leaves it as a stop does, and the next
 * start says how many it opened again, per task, and how many it closed. One that cannot be opened
 * again is closed by an Approval record answered by `restart`. Through a real core and its sockets.
 */
import { assert, assertEquals } from "../assert.ts";
import { type Json, until, withBox } from "../kit/mod.ts";

const RESTART_LINE = "see runbook.md#approvals-at-restart";

Deno.test("the start after a restart opens the open approvals again and says how many, per task; answered, the next start says nothing", async () => {
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
      const text = await Deno.readTextFile(path).catch(() => "{}");
      return JSON.parse(text).approvals?.length === 3;
    });
    const before = (await box.admin("GET", "/approvals")).body.items;
    assert(!box.core.notices.some((line) => line.includes(RESTART_LINE)));

    await box.restart();
    const said = box.core.notices.filter((line) => line.includes(RESTART_LINE));
    assertEquals(said, [
      `gurt serve: 3 approvals open before the restart are open again with their numbers (${one.id}: 2, ${two.id}: 1); gurt approvals lists them; ${RESTART_LINE}`,
    ]);
    assertEquals((await box.admin("GET", "/approvals")).body.items, before);

    for (const item of before) {
      assertEquals((await box.admin("POST", `/approvals/${item.approval}/refuse`, {})).status, 200);
    }
    await box.restart();
    assert(!box.core.notices.some((line) => line.includes(RESTART_LINE)));
  });
});

Deno.test("a kept approval that cannot be opened again is closed at the start by an Approval record answered by restart", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    const answer = await task.request("POST", "/ask", { question: "q", key: "q", waitMs: 0 });
    assertEquals(answer.body.pending, true);
    const [shown] = (await box.admin("GET", "/approvals")).body.items;
    const path = `${box.home}/run/approvals-open.json`;
    await until(async () => (await Deno.readTextFile(path).catch(() => "")).includes('"q"'));
    await box.restart({
      // As a model request's approval is kept: with nothing that opens it again.
      whileDown: async () => {
        const kept = JSON.parse(await Deno.readTextFile(path));
        kept.approvals[0].kept = null;
        await Deno.writeTextFile(path, JSON.stringify(kept));
      },
    });
    assertEquals(
      box.core.notices.filter((line) => line.includes(RESTART_LINE)),
      [
        `gurt serve: no approval open before the restart is open again; 1 approval closed (0 expired while gurt serve was stopped, 1 could not be opened again: their tasks ask again); ${RESTART_LINE}`,
      ],
    );
    assertEquals((await box.admin("GET", "/approvals")).body.items, []);
    const closed = (await box.records()).filter((r: Json) =>
      r.event.type === "approval" && r.event.decision === shown.approval
    );
    assertEquals(closed.map((r: Json) => [r.event.answer, r.event.by]), [["refused", "restart"]]);
    await assertGone(path);
  });
});

async function assertGone(path: string): Promise<void> {
  const there = await Deno.stat(path).then(() => true, () => false);
  assertEquals(there, false, `${path} should be gone once nothing is open`);
}

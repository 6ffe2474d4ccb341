/** recoverTaskJournals: what `gurt serve` voids and syncs before the audit log goes on. */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { Journal, recoverTaskJournals, writeTask } from "../../mod/broker/mod.ts";
import type { TaskRecord } from "../../mod/broker/mod.ts";
import { withHome } from "../kit/mod.ts";

const T = new Date(0).toISOString();

async function taskWith(home: string, id: string, state: TaskRecord["state"], results: number[]) {
  await Deno.mkdir(`${home}/tasks/${id}`, { recursive: true });
  await writeTask(home, {
    id,
    prompt: "",
    worker: { kind: "none" },
    tools: ["example.echo"],
    budgetCents: null,
    state,
    created: T,
    ended: null,
    endReason: null,
    user: null,
    pid: null,
  });
  const journal = await Journal.open(`${home}/tasks/${id}/journal.jsonl`);
  for (const result of results) {
    await journal.append({
      type: "tool.result",
      time: T,
      key: `k${result}`,
      tool: "example.echo",
      answer: { ok: true, output: { text: "hi" } },
      cost: 1,
      result,
    });
  }
  journal.close();
}

async function lines(home: string, id: string): Promise<{ type: string; result?: number }[]> {
  const text = await Deno.readTextFile(`${home}/tasks/${id}/journal.jsonl`);
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

Deno.test("the answers of live tasks whose Result record is the first lost seq or later are voided, once, and their journals synced; ended tasks are left alone", async () => {
  await withHome(async (home) => {
    await taskWith(home, "tlive", "running", [2, 6, 7, 9]);
    await taskWith(home, "twait", "waiting", [8]);
    await taskWith(home, "tdone", "done", [10]);
    await Deno.mkdir(`${home}/tasks/tbroken`);
    const synced: string[] = [];
    const sync = (path: string) => Promise.resolve(void synced.push(path));
    const notices = await recoverTaskJournals(home, { lostFrom: 7, sync });
    assertEquals(notices.length, 3);
    // Each live journal is synced before it is read: a killed core's lines may be in memory only.
    assertEquals(
      synced.map((path) => path.slice(home.length)).sort(),
      ["/tasks/tlive/journal.jsonl", "/tasks/twait/journal.jsonl"],
    );
    assertStringIncludes(notices.join("\n"), "task tlive: a call's answer is void");
    const live = await Journal.open(`${home}/tasks/tlive/journal.jsonl`);
    assertEquals([...live.state.calls.keys()].sort(), ["k2", "k6"]);
    assertEquals(live.state.spentCents, 2);
    const voided = (await lines(home, "tlive")).filter((l) => l.type === "tool.unrecorded");
    assertEquals(voided.map((l) => l.result), [7, 9]);
    assertEquals((await Journal.open(`${home}/tasks/twait/journal.jsonl`)).state.calls.size, 0);
    assertEquals((await lines(home, "tdone")).length, 1);
    // Run again (a crash during the start): nothing more to void.
    assertEquals(await recoverTaskJournals(home, { lostFrom: 7 }), []);
    assertEquals((await lines(home, "tlive")).length, 6);
  }, { prefix: "gurt-unrecorded-" });
});

Deno.test("a home with no tasks folder has nothing to void", async () => {
  await withHome(async (home) => {
    assertEquals(await recoverTaskJournals(home, { lostFrom: 0 }), []);
  }, { prefix: "gurt-unrecorded-" });
});

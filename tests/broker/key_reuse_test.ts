/**
 * A key names one call (as Stripe's idempotency keys do): the same key with the same tool and
 * canonical input answers the logged result without a second run; the same key with another tool
 * or another input is refused with 409, naming the key, and nothing runs and nothing is recorded.
 * The journal keeps what each key was used for, so the same holds after the core restarts.
 */
import { z } from "zod";
import { defineTool } from "../../mod/tools/mod.ts";
import type { AppTool } from "../../mod/tools/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, type Json, pendingApproval, startBox, type TestTask, withBox } from "../kit/mod.ts";

/** A test tool that counts its runs. */
function counted(name: string): { runs: unknown[]; tool: AppTool<never> } {
  const runs: unknown[] = [];
  const tool = defineTool({
    name,
    description: "Counts its runs.",
    input: z.strictObject({ n: z.number(), note: z.string().optional() }),
    secrets: [],
    run: (_ctx, input) => {
      runs.push(input);
      return Promise.resolve({ tool: name, runs: runs.length });
    },
  });
  return { runs, tool: tool as AppTool<never> };
}

const GRANTS = { read: grant({ tool: "test.read" }), write: grant({ tool: "test.write" }) };

async function journalText(home: string, task: string): Promise<string> {
  return await Deno.readTextFile(`${home}/tasks/${task}/journal.jsonl`);
}

async function post(task: TestTask, body: unknown): Promise<{ status: number; body: Json }> {
  return await task.request("POST", "/call", body);
}

/** Checks that a reuse of `key` is refused with 409 and leaves the audit log and journal as they were. */
async function refused(
  box: { home: string; records(): Promise<Json[]> },
  task: TestTask,
  body: { tool: string; input: unknown; key: string },
  firstTool: string,
): Promise<void> {
  const records = (await box.records()).length;
  const journal = await journalText(box.home, task.id);
  const answer = await post(task, body);
  assertEquals(answer.status, 409, JSON.stringify(answer.body));
  assertEquals(
    answer.body.error,
    `the key ${
      JSON.stringify(body.key)
    } was already used for another call (${firstTool}); use a new key for a new call`,
  );
  assertEquals((await box.records()).length, records, "nothing was recorded");
  assertEquals(await journalText(box.home, task.id), journal, "nothing was journalled");
}

Deno.test("the same key with the same tool and input answers the logged result; another tool or input with that key is refused with 409 and nothing runs, before and after a restart", async () => {
  const read = counted("test.read");
  const write = counted("test.write");
  await withBox({ grants: GRANTS, tools: [read.tool, write.tool] }, async (box) => {
    const task = await box.startTask({ tools: ["test.read", "test.write"] });
    const first = { ok: true, output: { tool: "test.read", runs: 1 } };
    assertEquals(await task.call("test.read", { n: 1, note: "a" }, "k"), first);
    // The same call, its input's fields in another order: the logged answer, no second run.
    assertEquals(await task.call("test.read", { note: "a", n: 1 }, "k"), first);
    assertEquals(read.runs.length, 1);

    await refused(
      box,
      task,
      { tool: "test.write", input: { n: 1, note: "a" }, key: "k" },
      "test.read",
    );
    await refused(
      box,
      task,
      { tool: "test.read", input: { n: 2, note: "a" }, key: "k" },
      "test.read",
    );
    assertEquals(write.runs.length, 0, "the other tool never ran");
    assertEquals(read.runs.length, 1, "the other input never ran");

    await box.restart();
    assertEquals(await task.call("test.read", { n: 1, note: "a" }, "k"), first);
    await refused(
      box,
      task,
      { tool: "test.write", input: { n: 1, note: "a" }, key: "k" },
      "test.read",
    );
    await refused(box, task, { tool: "test.read", input: { n: 1 }, key: "k" }, "test.read");
    assertEquals([read.runs.length, write.runs.length], [1, 0]);

    // A new key is a new call.
    assertEquals(await task.call("test.write", { n: 1, note: "a" }, "k2"), {
      ok: true,
      output: { tool: "test.write", runs: 1 },
    });
  });
});

Deno.test("a key whose call was denied is used: another call with it is refused with 409", async () => {
  const read = counted("test.read");
  const write = counted("test.write");
  await withBox({ grants: { read: GRANTS.read }, tools: [read.tool, write.tool] }, async (box) => {
    const task = await box.startTask({ tools: ["test.read", "test.write"] });
    const denied = await task.call("test.write", { n: 1 }, "d");
    assertEquals(denied.ok, false);
    await refused(box, task, { tool: "test.read", input: { n: 1 }, key: "d" }, "test.write");
    assertEquals(await task.call("test.write", { n: 1 }, "d"), denied);
    assertEquals([read.runs.length, write.runs.length], [0, 0]);
  });
});

Deno.test("a key whose call is waiting on the owner cannot be joined by another call: 409, and the approval stays the first call's", async () => {
  const read = counted("test.read");
  const write = counted("test.write");
  await withBox({
    grants: { read: grant({ tool: "test.read", mode: "ask" }), write: GRANTS.write },
    tools: [read.tool, write.tool],
    env: { BOX_APPROVAL_WAIT_MS: "60000" },
  }, async (box) => {
    const task = await box.startTask({ tools: ["test.read", "test.write"] });
    const waiting = task.call("test.read", { n: 1 }, "w");
    const id = await pendingApproval(box, task);
    await refused(box, task, { tool: "test.write", input: { n: 1 }, key: "w" }, "test.read");
    await refused(box, task, { tool: "test.read", input: { n: 9 }, key: "w" }, "test.read");
    assertEquals((await box.admin("POST", `/approvals/${id}/approve`, {})).status, 200);
    assertEquals(await waiting, { ok: true, output: { tool: "test.read", runs: 1 } });
    assertEquals([read.runs.length, write.runs.length], [1, 0]);
  });
});

Deno.test("a call cut off before its result line runs again with its key after a restart, and another call with that key is refused", async () => {
  const read = counted("test.read");
  const write = counted("test.write");
  await withBox({ grants: GRANTS, tools: [read.tool, write.tool] }, async (box) => {
    const task = await box.startTask({ tools: ["test.read", "test.write"] });
    assertEquals((await task.call("test.read", { n: 1 }, "c")).ok, true);
    const path = `${box.home}/tasks/${task.id}/journal.jsonl`;
    await box.restart({
      // As a crash between the tool.call line and the tool.result line would have left it.
      whileDown: async () => {
        const lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "");
        assertEquals(lines.map((l) => JSON.parse(l).type), ["tool.call", "tool.result"]);
        await Deno.writeTextFile(path, `${lines[0]}\n`);
      },
    });
    await refused(box, task, { tool: "test.write", input: { n: 1 }, key: "c" }, "test.read");
    assertEquals(write.runs.length, 0);
    assertEquals(await task.call("test.read", { n: 1 }, "c"), {
      ok: true,
      output: { tool: "test.read", runs: 2 },
    });
  });
});

Deno.test("the 409 names the key as the task sent it, quoted", async () => {
  const read = counted("test.read");
  await withBox({ grants: { read: GRANTS.read }, tools: [read.tool] }, async (box) => {
    const task = await box.startTask({ tools: ["test.read"] });
    assertEquals((await task.call("test.read", { n: 1 }, 'a "quoted" key')).ok, true);
    const answer = await post(task, { tool: "test.read", input: { n: 2 }, key: 'a "quoted" key' });
    assertEquals(answer.status, 409);
    assertStringIncludes(answer.body.error, 'the key "a \\"quoted\\" key" was already used');
    assert(answer.body.code === "key_reused", JSON.stringify(answer.body));
  });
});

Deno.test("a journal line written before digests were kept binds its key by tool: another tool is refused, the same tool answers the logged result", async () => {
  const read = counted("test.read");
  const write = counted("test.write");
  const box = await startBox({ grants: GRANTS, tools: [read.tool, write.tool] });
  try {
    const task = await box.startTask({ tools: ["test.read", "test.write"] });
    const first = await task.call("test.read", { n: 1 }, "old");
    const path = `${box.home}/tasks/${task.id}/journal.jsonl`;
    await box.restart({
      whileDown: async () => {
        const lines = (await Deno.readTextFile(path)).split("\n").filter((l) => l !== "");
        const old = lines.map((l) => {
          const { input_sha256: digest, ...rest } = JSON.parse(l);
          assert(/^[0-9a-f]{64}$/.test(digest), `a line without its digest: ${l}`);
          return JSON.stringify(rest);
        });
        await Deno.writeTextFile(path, old.map((l) => `${l}\n`).join(""));
      },
    });
    await refused(box, task, { tool: "test.write", input: { n: 1 }, key: "old" }, "test.read");
    assertEquals(await task.call("test.read", { n: 2 }, "old"), first);
    assertEquals([read.runs.length, write.runs.length], [1, 0]);
  } finally {
    await box.close();
  }
});

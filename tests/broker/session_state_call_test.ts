/**
 * The session state through POST /call (docs/grants.md#taint): every Decision step and every Result
 * step reads the file, so a damaged file denies the next call with state_unreadable before anything
 * runs and keeps a result it finds damaged from being answered, and the Result records carry the
 * state as the file says it, after the owner changed it by hand too.
 */
import { z } from "zod";
import { defineTool } from "../../mod/tools/mod.ts";
import type { AppTool } from "../../mod/tools/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { counter, grant, pendingApproval, withBox } from "../kit/mod.ts";

const DAMAGED = "Denied: this session's broker state is damaged; the owner has been told.";

Deno.test("a damaged session state file denies the next call with state_unreadable, runs nothing and tells the owner; the Result after its repair carries the repaired state", async () => {
  const { runs, options } = counter();
  await withBox(options, async (box) => {
    const task = await box.startTask({ tools: ["test.count"] });
    assertEquals((await task.call("test.count", { n: 1 }, "k1")).ok, true);
    const file = `${box.home}/broker/sessions/${task.id}.json`;
    assertEquals(JSON.parse(await Deno.readTextFile(file)), {
      taint: "private",
      untrusted: false,
    });

    // Raised by hand between two calls: the next call's Decision step reads it, and its Result
    // carries it.
    await Deno.writeTextFile(file, '{"taint":"secret","untrusted":false}');
    assertEquals((await task.call("test.count", { n: 2 }, "k2")).ok, true);

    for (const [n, damage] of [[3, "{not json"], [4, '{"taint":"public","untrusted":false}']]) {
      await Deno.writeTextFile(file, damage as string);
      assertEquals(await task.call("test.count", { n }, `k${n}`), { ok: false, error: DAMAGED });
    }
    assertEquals(runs.length, 2);
    const decisions = (await box.records()).filter((r) => r.event.type === "decision");
    assertEquals(decisions.slice(2).map((r) => r.event.outcome.reason), [
      "state_unreadable",
      "state_unreadable",
    ]);
    assert(box.logs.some((line) => line.includes("runbook.md#broker-state-damaged")));

    // Repaired by hand: the next call reads it.
    await Deno.writeTextFile(file, '{"taint":"secret","untrusted":true}');
    assertEquals((await task.call("test.count", { n: 5 }, "k5")).ok, true);
    assertEquals(runs.length, 3);
    const records = await box.records();
    const last = records.filter((r) => r.event.type === "decision").at(-1);
    assertEquals([last.event.taint, last.event.untrusted], ["secret", true]);
    const results = records.filter((r) => r.event.type === "result");
    assertEquals(results.map((r) => r.event.taint_after), ["private", "secret", "secret"]);
  });
});

/** A tool that damages its task's state file while it runs. */
function damager(name: string): AppTool<never> {
  return defineTool({
    name,
    description: "Damages its task's session state file, then answers.",
    input: z.strictObject({ n: z.number() }),
    secrets: [],
    run: async (ctx, input) => {
      await Deno.writeTextFile(`${ctx.home}/broker/sessions/${ctx.task}.json`, "{damaged");
      return input;
    },
  }) as AppTool<never>;
}

Deno.test("a state file damaged while a call runs: its result is not answered, raising the taint or not, and the next call is denied", async () => {
  await withBox({
    grants: {
      keep: grant({ tool: "test.keep", result_class: "private" }),
      raise: grant({ tool: "test.raise", result_class: "secret" }),
      echo: grant({ tool: "example.echo" }),
    },
    tools: [damager("test.keep"), damager("test.raise")],
  }, async (box) => {
    const task = await box.startTask({ tools: ["test.keep", "test.raise", "example.echo"] });
    const file = `${box.home}/broker/sessions/${task.id}.json`;
    assertEquals((await task.call("example.echo", { text: "a" }, "e1")).ok, true);
    // The Result step reads the file, finds it damaged: no Result record, the content not sent.
    for (const [tool, key] of [["test.raise", "r1"], ["test.keep", "k1"]]) {
      await Deno.writeTextFile(file, '{"taint":"private","untrusted":false}');
      assertEquals(await task.call(tool, { n: 1 }, key), {
        ok: false,
        error: "the result could not be recorded",
      });
      assertEquals(await task.call("example.echo", { text: key }, `after-${key}`), {
        ok: false,
        error: DAMAGED,
      });
    }
    const results = (await box.records()).filter((r) => r.event.type === "result");
    assertEquals(results.map((r) => [r.event.call, r.event.status]), [["e1", "result"]]);
  });
});

Deno.test("the state raised by hand while a call waits for its approval: the Result after the approval carries it", async () => {
  await withBox({
    grants: {
      echo: grant({ tool: "example.echo" }),
      spend: grant({ tool: "example.spend", mode: "ask" }),
    },
  }, async (box) => {
    const task = await box.startTask({ tools: ["example.echo", "example.spend"] });
    assertEquals((await task.call("example.echo", { text: "a" }, "e1")).ok, true);
    const spend = task.call("example.spend", { cents: 1 }, "s1");
    const id = await pendingApproval(box, task);
    await Deno.writeTextFile(
      `${box.home}/broker/sessions/${task.id}.json`,
      '{"taint":"secret","untrusted":true}',
    );
    assertEquals((await box.admin("POST", `/approvals/${id}/approve`)).status, 200);
    assertEquals((await spend).ok, true);
    const results = (await box.records()).filter((r) => r.event.type === "result");
    assertEquals(results.map((r) => [r.event.call, r.event.taint_after]), [
      ["e1", "private"],
      ["s1", "secret"],
    ]);
  });
});

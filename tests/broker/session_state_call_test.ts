/**
 * The session state through POST /call (seed 002 §4): every Decision step reads the file, so a
 * damaged file denies the next call with state_unreadable before anything runs, and the Result
 * records carry the state as the file says it, after the file changed between calls too.
 */
import { z } from "zod";
import { defineTool } from "../../mod/tools/mod.ts";
import type { AppTool } from "../../mod/tools/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { counter, grant, startBox } from "../core/harness.ts";

const DAMAGED = "Denied: this session's broker state is damaged; the owner has been told.";

Deno.test("a damaged session state file denies the next call with state_unreadable, runs nothing and tells the owner; the Result after its repair carries the repaired state", async () => {
  const { runs, tool } = counter();
  const box = await startBox({ grants: { count: grant({ tool: "test.count" }) }, tools: [tool] });
  try {
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
  } finally {
    await box.close();
  }
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

Deno.test("a state file damaged while a call runs: a result that must raise the taint is not answered, one that need not is, and the next call is denied", async () => {
  const box = await startBox({
    grants: {
      keep: grant({ tool: "test.keep", result_class: "private" }),
      raise: grant({ tool: "test.raise", result_class: "secret" }),
    },
    tools: [damager("test.keep"), damager("test.raise")],
  });
  try {
    const task = await box.startTask({ tools: ["test.keep", "test.raise", "example.echo"] });
    const file = `${box.home}/broker/sessions/${task.id}.json`;
    // The state as this core wrote it: the first result writes the file.
    await box.writeGrant("echo", grant({ tool: "example.echo" }));
    assertEquals((await task.call("example.echo", { text: "a" }, "e1")).ok, true);

    // The raise reads the file to raise it and finds it damaged: no Result record, and the content
    // is not sent.
    assertEquals(await task.call("test.raise", { n: 1 }, "r1"), {
      ok: false,
      error: "the result could not be recorded",
    });
    assertEquals(await task.call("example.echo", { text: "b" }, "e2"), {
      ok: false,
      error: DAMAGED,
    });

    // Repaired at what this core last wrote; a result that does not raise it is recorded from
    // the state the Decision step read, and the damage is found by the next Decision step.
    await Deno.writeTextFile(file, '{"taint":"private","untrusted":false}');
    assertEquals(await task.call("test.keep", { n: 2 }, "k1"), { ok: true, output: { n: 2 } });
    assertEquals(await task.call("example.echo", { text: "c" }, "e3"), {
      ok: false,
      error: DAMAGED,
    });
    const results = (await box.records()).filter((r) => r.event.type === "result");
    assertEquals(results.map((r) => [r.event.call, r.event.status, r.event.taint_after]), [
      ["e1", "result", "private"],
      ["k1", "result", "private"],
    ]);
  } finally {
    await box.close();
  }
});

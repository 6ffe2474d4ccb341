/**
 * POST /call's journal lines through a real core: the tool.call line is in the journal before the
 * tool runs, and precedes its tool.result line, whether the tool's run ended at once or waited.
 */
import { z } from "zod";
import { defineTool } from "../../mod/tools/mod.ts";
import type { AppTool } from "../../mod/tools/mod.ts";
import { assertEquals } from "../assert.ts";
import { grant, withBox } from "../kit/mod.ts";

/** A tool that looks for its own tool.call line in the journal, at once or after a wait. */
function looker(name: string, wait: boolean, seen: boolean[]): AppTool<never> {
  return defineTool({
    name,
    description: "Says whether its tool.call line is in the journal when it runs.",
    input: z.strictObject({ n: z.number() }),
    secrets: [],
    run: async (ctx) => {
      const text = Deno.readTextFileSync(`${ctx.home}/tasks/${ctx.task}/journal.jsonl`);
      const key = ctx.key.slice(ctx.task.length + 1);
      seen.push(text.split("\n").some((l) => l !== "" && JSON.parse(l).key === key));
      if (wait) await new Promise((resolve) => setTimeout(resolve, 5));
      return { n: seen.length };
    },
  }) as AppTool<never>;
}

Deno.test("the tool.call line is in the journal before the tool runs and precedes its tool.result line, for a run that ends at once and one that waits", async () => {
  const seen: boolean[] = [];
  const quick = looker("test.quick", false, seen);
  const slow = looker("test.slow", true, seen);
  await withBox({
    grants: { quick: grant({ tool: "test.quick" }), slow: grant({ tool: "test.slow" }) },
    tools: [quick, slow],
  }, async (box) => {
    const task = await box.startTask({ tools: ["test.quick", "test.slow"] });
    assertEquals((await task.call("test.quick", { n: 1 }, "q1")).ok, true);
    assertEquals((await task.call("test.slow", { n: 2 }, "s1")).ok, true);
    assertEquals((await task.call("test.quick", { n: 3 }, "q2")).ok, true);
    assertEquals(seen, [true, true, true]);
    const journal = (await Deno.readTextFile(`${box.home}/tasks/${task.id}/journal.jsonl`))
      .split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    assertEquals(journal.map((l) => `${l.type} ${l.key}`), [
      "tool.call q1",
      "tool.result q1",
      "tool.call s1",
      "tool.result s1",
      "tool.call q2",
      "tool.result q2",
    ]);
    const decisions = (await box.records()).filter((r) => r.event.type === "decision");
    assertEquals(
      journal.filter((l) => l.type === "tool.call").map((l) => l.decision),
      decisions.map((r) => r.seq),
    );
  });
});

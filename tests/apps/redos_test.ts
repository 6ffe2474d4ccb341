/**
 * An app's input schema is someone else's: a pattern built to backtrack without end, met by a
 * task's input, must not hold the core's one thread (every gurt process runs V8 with its linear
 * regular-expression engine past excessive backtracking: mod/config's V8_FLAGS).
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { hostileSource } from "./hostile_kit.ts";
import { startAppBox } from "./app_kit.ts";

Deno.test({
  name:
    "a schema pattern that backtracks exponentially on a task's input is decided at once, and the core goes on",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const box = await startAppBox();
    try {
      const hostile = await hostileSource(box, "regex", { list: "redos" });
      const added = await box.add(hostile.folder, "regex");
      assertEquals(added.status, 200, JSON.stringify(added.body));
      await box.grant({ tool: "regex.match" });
      await box.grant({ tool: "regex.echo" });
      const task = await box.task(["regex.match", "regex.echo"]);
      // 40 a's and a '!': about 2^40 steps for a backtracking engine, the core held for hours.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("the core is stuck on the pattern")), 60_000);
      });
      try {
        const bad = await Promise.race([
          box.call(task, "regex.match", { s: `${"a".repeat(40)}!` }),
          stuck,
        ]);
        assertEquals(bad.body.ok, false, JSON.stringify(bad.body));
        assertStringIncludes(bad.body.error, "the arguments are not valid for this tool");
        const fine = await Promise.race([box.call(task, "regex.echo", {}), stuck]);
        assertEquals(fine.body.ok, true, JSON.stringify(fine.body));
      } finally {
        clearTimeout(timer);
      }
    } finally {
      await box.close();
    }
  },
});

/**
 * `gurt task start` without a worker that can run: one sentence naming every worker and what each
 * needs, before anything reaches the core.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt, withHome } from "../kit/mod.ts";

const CHOICES = [
  "--worker loop",
  "--worker cmd [PROMPT] -- COMMAND",
  "--worker test --script FILE",
  "--worker none",
];

Deno.test("gurt task start with a prompt and no worker names every worker and what each needs, in one line, and starts nothing", async () => {
  await withHome(async (home) => {
    for (const args of [["tidy my notes"], ["--worker", "test", "tidy my notes"]]) {
      const run = await gurt(["--home", home, "task", "start", ...args]);
      assertEquals(run.code, 1, run.stderr);
      assertEquals(run.stdout, "");
      const lines = run.stderr.trim().split("\n");
      assertEquals(lines.length, 1, run.stderr);
      for (const choice of CHOICES) assertStringIncludes(lines[0], choice);
      assertStringIncludes(lines[0], "gurt vault set ANTHROPIC_API_KEY");
      // Nothing was asked of a core: there is none, and no socket was looked for.
      assert(!lines[0].includes("admin.sock"), lines[0]);
    }
  }, { prefix: "gurt-task-start-" });
});

Deno.test("gurt task start --script with a file that does not exist says which, in a sentence, and starts nothing", async () => {
  await withHome(async (home) => {
    const run = await gurt(["--home", home, "task", "start", "--script", `${home}/nope.txt`, "x"]);
    assertEquals(run.code, 1, run.stderr);
    assertEquals(run.stdout, "");
    assertStringIncludes(
      run.stderr,
      `--script "${home}/nope.txt" cannot be read: it does not exist`,
    );
    assert(!run.stderr.includes("os error"), run.stderr);
  }, { prefix: "gurt-task-start-" });
});

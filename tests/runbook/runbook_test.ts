import { assertEquals, assertStringIncludes } from "../assert.ts";
import { collectPointers, gateProblems, pointersIn } from "./gate.ts";

const root = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

Deno.test("every runbook pointer in mod/ and tests/ names a heading of runbook.md", async () => {
  const pointers = await collectPointers(root, ["mod", "tests"]);
  const runbook = await Deno.readTextFile(`${root}/runbook.md`);
  assertEquals(gateProblems(pointers, runbook), []);
});

Deno.test("the gate reports a pointer whose heading was removed from the runbook", async () => {
  const pointers = await collectPointers(root, ["mod"]);
  const runbook = await Deno.readTextFile(`${root}/runbook.md`);
  const anchor = pointers[0].anchor;
  const without = runbook.replace(`## ${anchor}\n`, "## something-else\n");
  const problems = gateProblems(pointers, without);
  assertStringIncludes(problems.join("\n"), `runbook.md has no "## ${anchor}"`);
});

Deno.test("the gate fails when it finds no pointer at all", () => {
  assertEquals(gateProblems([], "## a\n"), [
    "no runbook pointer found at all: the search is broken",
  ]);
});

Deno.test("the gate refuses a pointer whose anchor is not written out", () => {
  const pointers = pointersIn("x.ts", "throw new Error(`see runbook.md#${anchor}`);");
  assertEquals(gateProblems(pointers, "## a\n"), [
    "x.ts:1: a runbook pointer without a written anchor",
  ]);
});

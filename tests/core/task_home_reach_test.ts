/**
 * A worker whose task user cannot reach its home (a box home inside a folder only root may enter)
 * ends its task at once, failed, with a sentence naming the folder and the user, instead of the
 * bare "Permission denied" of the spawn; with the folder opened, the same task runs. The start of
 * a core with task users says so first.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startBox, startCmdTask, until, withHome } from "../kit/mod.ts";
import { ensureHomeLayout } from "../../mod/core/home_layout.ts";

Deno.test({
  name:
    "as root, a box home under a 0700 folder: the worker cannot start, and its task fails naming the folder, its mode and the task's user, with a runbook pointer",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const closed = await Deno.makeTempDir({ prefix: "gurt-closed-" });
    await Deno.chmod(closed, 0o700);
    const box = await startBox({ home: `${closed}/home`, core: { asRoot: true } });
    try {
      const task = await startCmdTask(box, ["sh", "-c", "echo ran > ran.txt; exec sleep 300"]);
      assertEquals(task.state, "failed");
      const reason: string = task.endReason;
      assertStringIncludes(reason, "the worker could not start");
      assertStringIncludes(reason, `box-${task.id}`);
      assertStringIncludes(reason, `${closed} (mode 0700, owner uid 0)`);
      assert(reason.endsWith("see runbook.md#task-home-unreachable"), reason);
      assertEquals((await box.admin("GET", `/tasks/${task.id}`)).body.task.endReason, reason);
      // Opened to others' passage, the same worker starts: the folder was the cause.
      await Deno.chmod(closed, 0o711);
      const opened = await startCmdTask(box, ["sh", "-c", "echo ran > ran.txt; exec sleep 300"]);
      assertEquals(opened.state, "running", opened.endReason);
      const ran = `${box.home}/tasks/${opened.id}/home/ran.txt`;
      await until(async () => (await Deno.readTextFile(ran).catch(() => "")) === "ran\n");
      await box.admin("POST", `/tasks/${opened.id}/stop`);
    } finally {
      await box.close();
      await Deno.remove(closed, { recursive: true });
    }
  },
});

Deno.test("a core with task users says at start that no worker will start when a folder above the home is closed to others, and is silent once it is open", async () => {
  await withHome(async (closed) => {
    await Deno.chmod(closed, 0o700);
    const home = `${closed}/home`;
    const said = (await ensureHomeLayout(home, { taskUsers: true })).join("\n");
    assertStringIncludes(said, "no task's worker will start");
    assertStringIncludes(said, `cannot reach the box home ${home}: ${closed} (mode 0700`);
    assertStringIncludes(said, "see runbook.md#task-home-unreachable");
    // Without task users the workers run as the core's own user: nothing to say.
    assertEquals(await ensureHomeLayout(home), []);
    await Deno.chmod(closed, 0o711);
    assertEquals(await ensureHomeLayout(home, { taskUsers: true }), []);
  }, { prefix: "gurt-closed-" });
});

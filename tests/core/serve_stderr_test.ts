/**
 * The same on a real `gurt serve` process's stderr: a task's refused path with %1b and %0a in it
 * prints one escaped line, so "gurt serve: stopped" is printed once, by the stop; and a `gurt
 * serve` started on a full disk (a real tmpfs box home filled to its last byte) exits saying which
 * home is full and pointing at the runbook, not only "No space left on device".
 */
import { assert, assertEquals } from "../assert.ts";
import { startServe, startTask, stopAllTasks, taskSocket } from "../kit/mod.ts";
import { canMount, mountSmallDisk } from "../kit/small_disk.ts";
import { requestRaw } from "../../mod/net/mod.ts";

Deno.test("a task cannot forge a line of gurt serve's stderr: ESC and newline are printed escaped", async () => {
  const home = await Deno.makeTempDir({ prefix: "gurt-stderr-" });
  const serve = await startServe(home);
  try {
    assertEquals(serve.exited, null, serve.stderr());
    const task = await startTask(serve, { tools: ["example.echo"] });
    const path = "/x%1b[31m%0agurt%20serve:%20stopped%0a";
    assertEquals((await requestRaw(taskSocket(home, task), { method: "GET", path })).status, 403);
    await stopAllTasks(serve);
  } finally {
    await serve.stop();
  }
  const text = serve.stderr();
  assert(!text.includes("\u001b"), JSON.stringify(text));
  const lines = text.split("\n");
  assertEquals(lines.filter((line) => line === "gurt serve: stopped").length, 1, text);
  assertEquals(lines[lines.length - 2], "gurt serve: stopped");
  assert(text.includes("/x\\u001b[31m\\u000agurt serve: stopped\\u000a on "), text);
  await Deno.remove(home, { recursive: true });
});

Deno.test({
  name: "gurt serve started on a full disk names the box home and the runbook entry",
  ignore: !canMount(),
  fn: async () => {
    const home = await Deno.makeTempDir({ prefix: "gurt-fullstart-" });
    const disk = await mountSmallDisk(home, 1024 * 1024);
    try {
      await disk.fill();
      const serve = await startServe(home);
      assert(serve.exited !== null, "gurt serve started on a full disk");
      assertEquals(serve.exited.success, false);
      const said = serve.stderr().trim().split("\n");
      const last = said[said.length - 1];
      assert(last.startsWith(`gurt serve cannot start: the box home ${home} has no room`), last);
      assert(last.endsWith("see runbook.md#disk-full"), last);
    } finally {
      await disk.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});

/**
 * The guest's watcher (mod/exec-guest/group_watcher.ts, session_helper.c's watch_main): the groups
 * it is told of get SIGKILL when the guest closes it, and no other.
 * (tests/guest/guest_death_test.ts proves the same when the guest dies of SIGKILL.)
 */
import { GroupWatcher } from "../../mod/exec-guest/group_watcher.ts";
import { installSessionHelper } from "../../mod/exec-guest/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { eventually, fileAppears, groupMembers } from "./helpers.ts";

Deno.test("the watcher kills every group it holds when it is closed, and none it was not told of", async () => {
  const installed = await installSessionHelper();
  assert(installed !== null && installed.path !== null);
  const dir = await Deno.makeTempDir({ prefix: "gurt-watch-test-" });
  const started: Deno.ChildProcess[] = [];
  const start = (name: string) => {
    const child = new Deno.Command(installed.path!, {
      args: ["/bin/sh", "-c", `sleep 60 & echo $$ > ${dir}/${name}; wait`],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    started.push(child);
    return child;
  };
  const watcher = GroupWatcher.start(installed.path);
  assert(watcher !== null, "the watcher starts");
  try {
    const held = start("held");
    const free = start("free");
    assertEquals(Number(await fileAppears(`${dir}/held`)), held.pid);
    assertEquals(Number(await fileAppears(`${dir}/free`)), free.pid);
    watcher.watch(held.pid);
    assertEquals(groupMembers(held.pid).length, 2, "the shell and its sleep");
    await watcher.close();
    assert(await eventually(() => groupMembers(held.pid).length === 0), "the held group is gone");
    assertEquals((await held.status).signal, "SIGKILL");
    assertEquals(groupMembers(free.pid).length, 2, "a group it was not told of runs on");
  } finally {
    await watcher.close();
    for (const child of started) {
      if (groupMembers(child.pid).length > 0) Deno.kill(-child.pid, "SIGKILL");
      await child.status;
    }
    await Deno.remove(dir, { recursive: true });
    await installed.remove();
  }
});

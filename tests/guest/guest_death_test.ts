/**
 * An exec dies with its guest: the guest's watcher (mod/exec-guest/group_watcher.ts) sends SIGKILL
 * to the exec's whole process group, and to what left it but carries the guest's mark, when the
 * guest dies, even of SIGKILL, where the exec used to run on past its time limit
 * (docs/guest-api.md#exec).
 */
import { assert, assertEquals } from "../assert.ts";
import { installSessionHelper } from "../../mod/exec-guest/mod.ts";
import {
  call,
  eventually,
  fileAppears,
  groupMembers,
  processAlive,
  startDaemon,
} from "../exec-guest/helpers.ts";

Deno.test("a guest killed with SIGKILL takes its detached exec's whole process group and a setsid child with it, and its helper folder is swept at once", async () => {
  const guest = await startDaemon();
  let group = 0;
  let apart = 0;
  try {
    const marker = `${guest.workspace}/pids`;
    // The exec's shell, a child it sent to the background with nohup, the shell's own sleep, and
    // one that left the group for a session of its own (setsid).
    const started = await call(guest, `${guest.exec}/v1/exec`, {
      method: "POST",
      json: {
        command: `nohup sleep 61 >/dev/null 2>&1 & n=$!; setsid sleep 62 >/dev/null 2>&1 & ` +
          `echo "$$ $n $!" > ${marker}; sleep 60`,
        detach: true,
        timeout_ms: 5000,
      },
    });
    assertEquals(started.status, 200);
    let background: number;
    [group, background, apart] = (await fileAppears(marker)).split(" ").map(Number);
    assert(groupMembers(group).includes(background), "the nohup child is in the exec's group");
    assert(groupMembers(group).length >= 3, "the shell, its sleep and the nohup sleep run");
    assert(await eventually(() => groupMembers(apart).includes(apart)), "setsid made its group");
    Deno.kill(guest.pid, "SIGKILL");
    const gone = await eventually(() => groupMembers(group).length === 0, 3_000);
    assert(gone, `the exec's group outlived its guest: ${groupMembers(group).join(", ")}`);
    assert(await eventually(() => !processAlive(apart), 3_000), "the setsid child outlived it");
    // The next guest to start sweeps the dead one's helper folder, however young.
    const probe = await Deno.makeTempDir();
    const tmp = probe.slice(0, probe.lastIndexOf("/"));
    await Deno.remove(probe);
    const folders = () =>
      [...Deno.readDirSync(tmp)].filter((entry) =>
        entry.name.startsWith(`gurt-guest-${guest.pid}-`)
      ).length;
    // (Any guest starting on this machine meanwhile may have swept it already.)
    const next = await installSessionHelper();
    await next?.remove();
    assertEquals(folders(), 0, "the next guest swept it");
  } finally {
    // Whatever a failed run left behind is not left to run on.
    for (const pgid of [group, apart]) {
      if (pgid > 0 && groupMembers(pgid).length > 0) Deno.kill(-pgid, "SIGKILL");
    }
    await guest.stop();
  }
});

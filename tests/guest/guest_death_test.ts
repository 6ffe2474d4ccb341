/**
 * An exec dies with its guest: the session helper's watcher (mod/exec-guest/session_helper.c)
 * sends SIGKILL to the exec's whole process group when the guest dies, even of SIGKILL, where the
 * exec used to run on past its time limit (docs/guest-api.md#exec).
 */
import { assert, assertEquals } from "../assert.ts";
import { installSessionHelper } from "../../mod/exec-guest/mod.ts";
import { call, eventually, fileAppears, groupMembers, startDaemon } from "../exec-guest/helpers.ts";

Deno.test("a guest killed with SIGKILL takes its detached exec's whole process group with it, and its helper folder is swept at once", async () => {
  const guest = await startDaemon();
  let group = 0;
  try {
    const marker = `${guest.workspace}/pids`;
    // The exec's shell, a child it sent to the background with nohup, and the shell's own sleep.
    const started = await call(guest, `${guest.exec}/v1/exec`, {
      method: "POST",
      json: {
        command: `nohup sleep 61 >/dev/null 2>&1 & echo "$$ $!" > ${marker}; sleep 60`,
        detach: true,
        timeout_ms: 5000,
      },
    });
    assertEquals(started.status, 200);
    let background: number;
    [group, background] = (await fileAppears(marker)).split(" ").map(Number);
    assert(groupMembers(group).includes(background), "the nohup child is in the exec's group");
    assert(groupMembers(group).length >= 3, "the shell, its sleep and the nohup sleep run");
    Deno.kill(guest.pid, "SIGKILL");
    const gone = await eventually(() => groupMembers(group).length === 0, 3_000);
    assert(gone, `the exec's group outlived its guest: ${groupMembers(group).join(", ")}`);
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
    if (group > 0 && groupMembers(group).length > 0) Deno.kill(-group, "SIGKILL");
    await guest.stop();
  }
});

/** A command that prints 1 GB is capped at the output limit while the daemon's memory stays flat. */
import { assert, assertEquals } from "../assert.ts";
import { call, startDaemon } from "./helpers.ts";

const MiB = 1024 * 1024;

function status(pid: number, field: "VmRSS" | "VmHWM"): number {
  const text = Deno.readTextFileSync(`/proc/${pid}/status`);
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

Deno.test("1 GB of output is capped at BOX_MAX_OUTPUT_BYTES and resident memory stays within 64 MB of idle", async () => {
  const guest = await startDaemon();
  try {
    // Warm up the exec path once, so the idle figure includes the code it loads.
    await call(guest, `${guest.exec}/v1/exec`, { method: "POST", json: { command: ["true"] } });
    const idle = status(guest.pid, "VmRSS");
    // Reset the peak so VmHWM measures only what the 1 GB exec adds.
    Deno.writeTextFileSync(`/proc/${guest.pid}/clear_refs`, "5");
    const answer = await call(guest, `${guest.exec}/v1/exec`, {
      method: "POST",
      json: { command: "yes | head -c 1073741824; echo done >&2" },
    });
    const peak = status(guest.pid, "VmHWM");
    assertEquals(answer.status, 200);
    assertEquals(answer.body.stdout.length, 8 * MiB);
    assertEquals(answer.body.truncated, true);
    assertEquals(answer.body.stderr, "done\n", "the command ran to its end");
    assertEquals(answer.body.exit_code, 0);
    assert(
      peak - idle <= 64 * MiB,
      `peak resident memory ${Math.round(peak / MiB)} MiB vs idle ${Math.round(idle / MiB)} MiB`,
    );
  } finally {
    await guest.stop();
  }
});

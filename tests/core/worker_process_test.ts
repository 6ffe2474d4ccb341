/** A task's recorded worker pid is stopped on restart only if it is still that task's worker. */
import { assertEquals } from "../assert.ts";
import { isWorkerOf } from "../../mod/core/worker_process.ts";

Deno.test("isWorkerOf knows a task's worker by its BOX_TASK, and not another process with a reused pid", async () => {
  const child = new Deno.Command("sleep", {
    args: ["30"],
    env: { BOX_TASK: "t1abc" },
    clearEnv: true,
  }).spawn();
  const other = new Deno.Command("sleep", { args: ["30"], clearEnv: true }).spawn();
  try {
    assertEquals(isWorkerOf(child.pid, "t1abc"), true);
    assertEquals(isWorkerOf(child.pid, "t1ab"), false);
    assertEquals(isWorkerOf(other.pid, "t1abc"), false);
  } finally {
    child.kill("SIGKILL");
    other.kill("SIGKILL");
    await child.status;
    await other.status;
  }
  assertEquals(isWorkerOf(child.pid, "t1abc"), false);
});

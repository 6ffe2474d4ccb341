/**
 * POST /step syncs the task's writable layer before the step is written: strace, attached to the
 * core, sees syncfs(2) on the task's home (one system call for every file its worker wrote) before
 * the journal's fdatasync of the step line; and steps that arrive while a sync runs share the next.
 */
import { assert, assertEquals } from "../assert.ts";
import { startServe, startTask, stopAllTasks, taskRequest } from "../kit/mod.ts";
import { HomeSync } from "../../mod/broker/home_sync.ts";

const strace = await new Deno.Command("sh", { args: ["-c", "command -v strace"], stdout: "piped" })
  .output().then((out) => out.success, () => false);

Deno.test({
  name: "POST /step: strace sees syncfs of the task's home before the step line's fdatasync",
  ignore: !strace || Deno.uid() !== 0,
  fn: async () => {
    // strace follows a core of its own, never this test process: a tracer on the test runner
    // would stop every other test file's thread and child with it (a CI run hung so).
    const home = await Deno.makeTempDir({ prefix: "gurt-step-sync-" });
    await Deno.writeTextFile(`${home}/gurt.toml`, `[tasks]\nhome_bytes = 67108864\n`);
    const serve = await startServe(home);
    const out = `${home}/strace.txt`;
    let tracer: Deno.ChildProcess | null = null;
    try {
      assertEquals(serve.exited, null, serve.stderr());
      const task = await startTask(serve, { tools: [] });
      const taskHome = `${home}/tasks/${task}/home`;
      await Deno.writeTextFile(`${taskHome}/work.txt`, "the worker's file\n");
      tracer = new Deno.Command("strace", {
        args: [
          "-f",
          "-y",
          "-e",
          "trace=syncfs,fdatasync",
          "-o",
          out,
          "-p",
          String(serve.child.pid),
        ],
        stdout: "null",
        stderr: "piped",
      }).spawn();
      // Ready once it says it has attached.
      const reader = tracer.stderr.getReader();
      let said = "";
      while (!said.includes("attached")) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`strace did not attach: ${said}`);
        said += new TextDecoder().decode(value);
      }
      const step = await taskRequest(home, task, {
        method: "POST",
        path: "/step",
        body: { text: "wrote work.txt" },
      });
      assertEquals(step.status, 200, JSON.stringify(step.body));
      Deno.kill(tracer.pid, "SIGINT");
      while (!(await reader.read()).done) { /* drained */ }
      await tracer.status;
      tracer = null;
      const lines = (await Deno.readTextFile(out)).split("\n");
      const syncfs = lines.findIndex((line) =>
        line.includes(`syncfs(`) && line.includes(`<${taskHome}>`)
      );
      assert(syncfs !== -1, `no syncfs of ${taskHome}:\n${lines.join("\n")}`);
      assert(lines[syncfs].includes(") = 0"), lines[syncfs]);
      const journal = lines.findIndex((line) =>
        line.includes("fdatasync(") && line.includes("journal.jsonl>")
      );
      assert(journal > syncfs, `the journal was synced before the home:\n${lines.join("\n")}`);
    } finally {
      if (tracer !== null) {
        Deno.kill(tracer.pid, "SIGKILL");
        await tracer.status;
      }
      if (serve.exited === null) {
        await stopAllTasks(serve);
        await serve.stop();
      }
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test("steps that arrive while a home's sync runs share the next sync, and none resolves before one that started after it", async () => {
  const runs: PromiseWithResolvers<void>[] = [];
  const sync = new HomeSync("/home", () => {
    const run = Promise.withResolvers<void>();
    runs.push(run);
    return run.promise;
  });
  const first = sync.sync();
  const second = sync.sync();
  const third = sync.sync();
  assertEquals(runs.length, 1);
  let secondDone = false;
  second.then(() => (secondDone = true));
  runs[0].resolve();
  await first;
  await Promise.resolve();
  assertEquals(secondDone, false, "a step shared a sync that started before it");
  assertEquals(runs.length, 2);
  runs[1].resolve();
  await Promise.all([second, third]);
  assertEquals(runs.length, 2);
});

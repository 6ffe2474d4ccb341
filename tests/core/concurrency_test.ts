/**
 * The concurrency test, with real processes: 8 callers, two tasks, fifty calls each, half the
 * grants `secret`, against a real `gurt serve`.
 */
import { assert, assertEquals } from "../assert.ts";
import { verifyHome } from "../../mod/audit/mod.ts";
import {
  auditRecords,
  grant,
  startServe,
  startTask,
  stopAllTasks,
  taskSocket,
} from "../kit/mod.ts";

const CALLER = new URL("./caller_process.ts", import.meta.url).pathname;
const RANK: Record<string, number> = { public: 0, private: 1, secret: 2 };

Deno.test("8 caller processes on two tasks, 50 calls each: the log verifies, no seq repeats, taint_after never goes down", async () => {
  const home = await Deno.makeTempDir({ prefix: "gurt-concurrency-" });
  await Deno.mkdir(`${home}/grants`);
  await Deno.writeTextFile(
    `${home}/grants/echo.toml`,
    grant({ tool: "example.echo", result_class: "secret" }),
  );
  await Deno.writeTextFile(
    `${home}/grants/note.toml`,
    grant({ tool: "example.note", result_class: "private" }),
  );
  const serve = await startServe(home);
  try {
    assertEquals(serve.exited, null, serve.stderr());
    const tools = ["example.echo", "example.note"];
    const tasks = [await startTask(serve, { tools }), await startTask(serve, { tools })];
    const callers = Array.from({ length: 8 }, (_, i) =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--quiet",
          "--allow-all",
          CALLER,
          taskSocket(home, tasks[i % 2]),
          `c${i}`,
          "50",
        ],
        stdout: "piped",
        stderr: "piped",
      }).output());
    for (const out of await Promise.all(callers)) {
      const text = new TextDecoder().decode(out.stdout);
      assertEquals(out.code, 0, new TextDecoder().decode(out.stderr));
      assertEquals(JSON.parse(text), { ok: 50, failures: [] });
    }

    const report = await verifyHome(home);
    assertEquals(report.failure, null);
    const records = await auditRecords(home);
    const seqs = records.map((r) => r.seq);
    assertEquals(new Set(seqs).size, seqs.length, "a seq repeats");
    const results = records.filter((r) => r.event.type === "result");
    assertEquals(results.length, 400);
    for (const task of tasks) {
      const taints = results.filter((r) => r.event.session === task).map((r) =>
        RANK[r.event.taint_after]
      );
      assertEquals(taints.length, 200);
      for (let i = 1; i < taints.length; i++) {
        assert(taints[i] >= taints[i - 1], `task ${task}: taint_after went down at result ${i}`);
      }
      // The first echo made the task secret; everything after stays secret.
      assertEquals(taints.at(-1), RANK.secret);
    }
  } finally {
    await stopAllTasks(serve);
    assertEquals((await serve.stop()).code, 0);
    await Deno.remove(home, { recursive: true });
  }
});

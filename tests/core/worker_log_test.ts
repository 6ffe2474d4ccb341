/**
 * A worker's log is capped at `[tasks] worker_log_bytes`: past it, the log keeps its head and its
 * newest tail with one line saying how many bytes were dropped between them (a worker printing
 * without end wrote 60 MB in 4 s beside the audit log).
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { WorkerLog } from "../../mod/core/worker_log.ts";
import { startBox, until, withHome } from "../kit/mod.ts";

const MARKER = /^\n\[gurt: (\d+) bytes of worker output dropped\]\n/;

/** Checks `log` against the whole output `out` under `cap`: the output itself, or head, marker, tail. */
function checkLog(log: string, out: string, cap: number): void {
  assert(log.length <= cap, `the log holds ${log.length} bytes, past its cap of ${cap}`);
  if (out.length <= cap) {
    assertEquals(log, out, "under the cap the log is the whole output");
    return;
  }
  const head = Math.floor(cap / 4);
  assertEquals(log.slice(0, head), out.slice(0, head), "the head is the output's start");
  const marker = MARKER.exec(log.slice(head));
  assert(
    marker !== null,
    `no marker after the head: ${JSON.stringify(log.slice(head, head + 80))}`,
  );
  const tail = log.slice(head + marker[0].length);
  assert(out.endsWith(tail), "the tail is the output's newest bytes");
  assert(tail.length >= cap / 4, `a tail of ${tail.length} bytes only`);
  assertEquals(Number(marker[1]), out.length - head - tail.length, "the marker counts the drop");
}

/** The output `line 0\nline 1\n…` of `total` bytes, cut into chunks of the given sizes. */
function output(total: number): string {
  let text = "";
  for (let i = 0; text.length < total; i++) text += `line ${i}\n`;
  return text.slice(0, total);
}

Deno.test("property: whatever the chunks, and across a reopen, the log is the output under the cap, else its head, a marker with the exact count, and its newest tail", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-worker-log-" });
  let n = 0;
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(4096, 5000, 8192),
        fc.array(fc.array(fc.integer({ min: 0, max: 12_000 }), { maxLength: 12 }), {
          minLength: 1,
          maxLength: 3,
        }),
        async (cap, runs) => {
          const path = `${dir}/worker-${n++}.log`;
          const total = runs.flat().reduce((sum, size) => sum + size, 0);
          const out = output(total);
          let at = 0;
          for (const sizes of runs) {
            // Each run is a worker started again: the log is opened afresh and goes on.
            const log = await WorkerLog.open(path, cap);
            for (const size of sizes) {
              await log.write(new TextEncoder().encode(out.slice(at, at + size)));
              at += size;
            }
            await log.close();
          }
          checkLog(await Deno.readTextFile(path), out, cap);
        },
      ),
      { numRuns: 150 },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writes made together (stdout and stderr) land whole, one after the other, under the cap", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/worker.log`;
    const log = await WorkerLog.open(path, 8192);
    const out = output(200_000);
    const chunks = Array.from({ length: 200 }, (_, i) => out.slice(i * 1000, (i + 1) * 1000));
    await Promise.all(chunks.map((chunk) => log.write(new TextEncoder().encode(chunk))));
    await log.close();
    checkLog(await Deno.readTextFile(path), out, 8192);
  }, { prefix: "gurt-worker-log-" });
});

Deno.test("a log left past the cap by an older core is cut at the next write: its head, a marker, the newest tail", async () => {
  await withHome(async (dir) => {
    const path = `${dir}/worker.log`;
    const out = output(100_000);
    await Deno.writeTextFile(path, out.slice(0, 99_000));
    const log = await WorkerLog.open(path, 4096);
    await log.write(new TextEncoder().encode(out.slice(99_000)));
    await log.close();
    checkLog(await Deno.readTextFile(path), out, 4096);
  }, { prefix: "gurt-worker-log-" });
});

Deno.test("a worker printing far past [tasks] worker_log_bytes leaves a log of at most that size, with its first line, the marker and its last lines", async () => {
  const cap = 65_536;
  const box = await startBox({ toml: `[tasks]\nworker_log_bytes = ${cap}\n` });
  try {
    const repeated = "a line of output that repeats";
    const started = await box.admin("POST", "/tasks", {
      worker: {
        kind: "cmd",
        command: [
          "sh",
          "-c",
          `echo FIRST-LINE; yes '${repeated}' | head -n 200000; echo LAST-LINE`,
        ],
      },
      tools: [],
    });
    assertEquals(started.status, 200, JSON.stringify(started.body));
    const id = started.body.task.id;
    const path = `${box.home}/tasks/${id}/worker.log`;
    await until(async () => {
      const task = (await box.admin("GET", `/tasks/${id}`)).body.task;
      const log = await Deno.readTextFile(path).catch(() => "");
      return task.state !== "running" && log.endsWith("LAST-LINE\n");
    }, 30_000);
    assertEquals((await box.admin("GET", `/tasks/${id}`)).body.task.state, "done");
    const out = `FIRST-LINE\n${`${repeated}\n`.repeat(200_000)}LAST-LINE\n`;
    const log = await Deno.readTextFile(path);
    assert(log.startsWith("FIRST-LINE\n"));
    checkLog(log, out, cap);
    assert(log.endsWith(`${repeated}\n${repeated}\nLAST-LINE\n`));
  } finally {
    await box.close();
  }
});

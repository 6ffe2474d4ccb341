/**
 * What syncing a task's home costs POST /step (issue 28): p50 of a /step one at a time on an
 * in-process core, with the syncfs of the task's home (`sync --file-system`, as shipped) and with
 * it replaced by nothing, beside the fsync floor (an appended line and its fdatasync, in the same
 * folder) and the home's sync alone. The step without it pays the journal's fdatasync and the
 * task folder's fsync; with it, one process start (about 1.7 ms here) and one syncfs more, which
 * commits the whole file system's dirty data: the target is that the step adds nothing beyond it.
 */
import { adminSocketPath, loadConfig } from "../mod/config/mod.ts";
import { Core } from "../mod/core/core.ts";
import { syncFileSystem } from "../mod/broker/home_sync.ts";
import { requestJson } from "../mod/net/mod.ts";
import { p50 } from "./measure.ts";
import { printTable } from "./table.ts";

const STEPS = 300;
const FLOOR_ROUNDS = 300;

/** p50 of `op` in ms; `before` (untimed) runs before each. */
async function timed(
  rounds: number,
  op: () => Promise<unknown>,
  before: () => Promise<unknown> = () => Promise.resolve(),
): Promise<number> {
  for (let i = 0; i < 20; i++) await before().then(op); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    await before();
    const start = performance.now();
    await op();
    samples.push(performance.now() - start);
  }
  return p50(samples);
}

/** p50 of /step on a fresh core whose home sync is `syncHome` (undefined: the real one). */
async function stepP50(syncHome?: (home: string) => Promise<void>): Promise<number> {
  const home = await Deno.makeTempDir({ prefix: "gurt-bench-step-" });
  await Deno.mkdir(`${home}/grants`);
  const config = loadConfig({ home, env: { BOX_VAULT: `${home}/vault.env` }, root: false });
  const core = await Core.start(config, { log: () => {}, asRoot: false, syncHome });
  try {
    const started = await requestJson(adminSocketPath(home), {
      method: "POST",
      path: "/tasks",
      body: { worker: { kind: "none" }, tools: ["example.echo"], budgetCents: null },
    });
    const id = (started.body as { task: { id: string } }).task.id;
    const socket = `${home}/tasks/${id}/broker.sock`;
    // A worker that writes a file before each step (untimed): the sync has something to write.
    let n = 0;
    const write = () =>
      Deno.writeTextFile(`${home}/tasks/${id}/home/out.txt`, `step ${n++}\n`.repeat(64));
    return await timed(STEPS, async () => {
      const answer = await requestJson(socket, {
        method: "POST",
        path: "/step",
        body: { text: `step ${n}` },
      });
      if (answer.status !== 200) throw new Error(`/step answered ${answer.status}`);
    }, write);
  } finally {
    await core.close();
    await Deno.remove(home, { recursive: true });
  }
}

async function floorP50(): Promise<{ fsync: number; syncfs: number }> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-bench-floor-" });
  try {
    const file = await Deno.open(`${dir}/floor.jsonl`, { append: true, create: true });
    const line = new TextEncoder().encode(`${JSON.stringify({ type: "step", text: "x" })}\n`);
    const fsync = await timed(FLOOR_ROUNDS, async () => {
      file.writeSync(line);
      await file.syncData();
    });
    file.close();
    const syncfs = await timed(
      FLOOR_ROUNDS / 3,
      () => syncFileSystem(dir),
      () => Deno.writeTextFile(`${dir}/out.txt`, "x\n".repeat(64)),
    );
    return { fsync, syncfs };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const floor = await floorP50();
const without = await stepP50(() => Promise.resolve());
const withSync = await stepP50();
printTable([
  {
    what: "POST /step p50, without the home's sync",
    unit: "ms",
    value: without,
    baselineWhat: "fsync floor (append + fdatasync) p50",
    baseline: floor.fsync,
    target: "<= 12",
  },
  {
    what: "the home's syncfs alone (sync -f) p50",
    unit: "ms",
    value: floor.syncfs,
    baselineWhat: "fsync floor (append + fdatasync) p50",
    baseline: floor.fsync,
    // syncfs commits the whole file system's dirty data: on a home shared with the box (no
    // [tasks] home_bytes file system of its own) it costs what the busiest writer left.
    target: "report",
  },
  {
    what: "POST /step p50, with the home's syncfs",
    unit: "ms",
    value: withSync,
    baselineWhat: "/step without + syncfs alone",
    baseline: without + floor.syncfs,
    target: "<= 1.3",
  },
]);

/**
 * What syncing a task's home costs POST /step (issue 28): p50 of a /step one at a time on an
 * in-process core, with the syncfs of the task's home (`sync --file-system`, as shipped) and with
 * it replaced by nothing, beside the fsync floor (an appended line and its fdatasync, in the same
 * file system) and the home's sync alone. The four are measured in alternating batches, so a load
 * that comes and goes (other processes' writes) weighs on each alike. The step without the sync
 * pays the journal's fdatasync and the task folder's fsync; with it, one process start (about
 * 1.7 ms here) and one syncfs more, which commits the whole file system's dirty data: the target is
 * that the step adds nothing beyond it.
 */
import { adminSocketPath, loadConfig } from "../mod/config/mod.ts";
import { Core } from "../mod/core/core.ts";
import { syncFileSystem } from "../mod/broker/home_sync.ts";
import { requestJson } from "../mod/net/mod.ts";
import { p50 } from "./measure.ts";
import { printTable } from "./table.ts";

const BATCHES = 10;
const PER_BATCH = 30;

/** A core with one task (worker none), whose home sync is `syncHome` (undefined: the real one). */
interface StepBox {
  step(): Promise<void>;
  close(): Promise<void>;
}

async function openBox(syncHome?: (home: string) => Promise<void>): Promise<StepBox> {
  const home = await Deno.makeTempDir({ prefix: "gurt-bench-step-" });
  await Deno.mkdir(`${home}/grants`);
  const config = loadConfig({ home, env: { BOX_VAULT: `${home}/vault.env` }, root: false });
  const core = await Core.start(config, { log: () => {}, asRoot: false, syncHome });
  const started = await requestJson(adminSocketPath(home), {
    method: "POST",
    path: "/tasks",
    body: { worker: { kind: "none" }, tools: ["example.echo"], budgetCents: null },
  });
  const id = (started.body as { task: { id: string } }).task.id;
  const socket = `${home}/tasks/${id}/broker.sock`;
  let n = 0;
  return {
    async step() {
      const answer = await requestJson(socket, {
        method: "POST",
        path: "/step",
        body: { text: `step ${n++}` },
      });
      if (answer.status !== 200) throw new Error(`/step answered ${answer.status}`);
    },
    async close() {
      await core.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

/** Times `op` PER_BATCH times into `samples`, a worker's file written (untimed) before each. */
async function batch(
  samples: number[],
  op: () => Promise<unknown>,
  write: () => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < PER_BATCH; i++) {
    await write();
    const start = performance.now();
    await op();
    samples.push(performance.now() - start);
  }
}

const dir = await Deno.makeTempDir({ prefix: "gurt-bench-floor-" });
const without = await openBox(() => Promise.resolve());
const withSync = await openBox();
const floorFile = await Deno.open(`${dir}/floor.jsonl`, { append: true, create: true });
const line = new TextEncoder().encode(`${JSON.stringify({ type: "step", text: "x" })}\n`);
const write = () => Deno.writeTextFile(`${dir}/out.txt`, "a worker's line\n".repeat(64));
const samples = {
  floor: [] as number[],
  syncfs: [] as number[],
  without: [] as number[],
  with: [] as number[],
};
try {
  for (let round = 0; round <= BATCHES; round++) {
    // Round 0 warms up and is dropped.
    const into = round === 0 ? { floor: [], syncfs: [], without: [], with: [] } : samples;
    await batch(into.floor, async () => {
      floorFile.writeSync(line);
      await floorFile.syncData();
    }, write);
    await batch(into.syncfs, () => syncFileSystem(dir), write);
    await batch(into.without, () => without.step(), write);
    await batch(into.with, () => withSync.step(), write);
  }
} finally {
  floorFile.close();
  await without.close();
  await withSync.close();
  await Deno.remove(dir, { recursive: true });
}
const floor = p50(samples.floor);
const syncfs = p50(samples.syncfs);
const stepWithout = p50(samples.without);
const stepWith = p50(samples.with);
printTable([
  {
    what: "POST /step p50, without the home's sync",
    unit: "ms",
    value: stepWithout,
    baselineWhat: "fsync floor (append + fdatasync) p50",
    baseline: floor,
    target: "<= 12",
  },
  {
    what: "the home's syncfs alone (sync -f) p50",
    unit: "ms",
    value: syncfs,
    baselineWhat: "fsync floor (append + fdatasync) p50",
    baseline: floor,
    // syncfs commits the whole file system's dirty data: on a home shared with the box (no
    // [tasks] home_bytes file system of its own) it costs what the busiest writer left.
    target: "report",
  },
  {
    what: "POST /step p50, with the home's syncfs",
    unit: "ms",
    value: stepWith,
    baselineWhat: "/step without + syncfs alone",
    baseline: stepWithout + syncfs,
    target: "<= 1.3",
  },
  {
    what: "POST /step p50, with the home's syncfs",
    unit: "ms",
    value: stepWith,
    baselineWhat: "fsync floor (append + fdatasync) p50",
    baseline: floor,
    target: "report",
  },
]);

/**
 * The core's figures (issue 5), against baselines measured in this run, on a real `gurt serve`:
 * POST /call of example.echo over a task socket, p50 and calls/s one at a time, against the fsync
 * floor times the syncs the path needs plus one; calls/s with 32 concurrent callers against the
 * one-at-a-time figure; and the resident memory of `gurt serve` with 100 open tasks (worker
 * `none`), against the same process with none and against the 150 MB target.
 */
import { gurtInvocation } from "../mod/core/self_command.ts";
import { adminSocketPath } from "../mod/config/mod.ts";
import { postCall, requestJson } from "../mod/net/mod.ts";
import { printTable } from "./table.ts";
import { type Peer, startPeer, stopPeer } from "./peer_process.ts";
import { fsyncTimes, p50 as median } from "./measure.ts";

const SEQUENTIAL_CALLS = 1000;
const CONCURRENT_CALLERS = 32;
const CALLS_PER_CALLER = 60;
const CONCURRENT_TASKS = 8;
const OPEN_TASKS = 100;
const FSYNC_ROUNDS = 1000;
/** The sequential calls and the fsync floor are measured in this many alternating batches. */
const BATCHES = 10;
/**
 * The durable writes of an allowed call whose result does not raise the taint: the Decision
 * record, the journal's tool.call line, the Result record and the journal's tool.result line. A
 * call that raises the taint also rewrites the session state (two more: its file and its folder).
 * For a tool whose run ends at once (example.echo), the two journal lines share one fdatasync, so
 * the path makes three; the Result record's and the journal's run at the same time, so the call
 * waits for two, one after the other.
 */
const PATH_SYNCS = 4;
/** The fdatasync calls that path makes (the two journal lines share one). */
const FDATASYNCS_MADE = 3;
/** The syncs the call waits for one after the other: the Decision record's, then the other two. */
const SYNC_WAITS = 2;

interface Serve {
  child: Deno.ChildProcess;
  home: string;
}

async function startServe(home: string): Promise<Serve> {
  const serve = gurtInvocation(["--home", home, "serve"]);
  const child = new Deno.Command(serve.program, {
    args: serve.args,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  const reader = child.stderr.getReader();
  while (!text.includes("admin socket ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`gurt serve did not start: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  // Keep draining stderr so the core never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done) { /* drained */ }
  })();
  return { child, home };
}

/** The structure's floor (bench/core_floor_server.ts), answering on `${dir}/floor.sock`. */
async function startStructure(dir: string): Promise<Peer & { socket: string }> {
  const socket = `${dir}/floor.sock`;
  return { ...await startPeer("core_floor_server.ts", [socket, dir]), socket };
}

async function stopServe(serve: Serve): Promise<void> {
  serve.child.kill("SIGTERM");
  await serve.child.status;
}

async function startTask(home: string): Promise<string> {
  const answer = await requestJson(adminSocketPath(home), {
    method: "POST",
    path: "/tasks",
    body: { worker: { kind: "none" }, tools: ["example.echo"], budgetCents: null },
  });
  if (answer.status !== 200) throw new Error(`task start: ${JSON.stringify(answer.body)}`);
  return (answer.body as { task: { id: string } }).task.id;
}

/** One /call as a worker sends it (postCall: a kept connection where one is free). */
function call(home: string, task: string, key: string): Promise<number> {
  return callSocket(`${home}/tasks/${task}/broker.sock`, key);
}

async function callSocket(socket: string, key: string): Promise<number> {
  const started = performance.now();
  const answer = await postCall(socket, {
    tool: "example.echo",
    input: { text: "hello" },
    key,
  });
  if (answer.body.ok !== true) {
    throw new Error(`call failed: ${JSON.stringify(answer.body)}`);
  }
  return performance.now() - started;
}

function rssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]);
  return kb / 1024;
}

async function newHome(): Promise<string> {
  const home = await Deno.makeTempDir({ prefix: "gurt-bench-core-" });
  await Deno.mkdir(`${home}/grants`);
  // 100 open tasks: as root each home is an image kept whole on the disk ([tasks] home_bytes), so
  // a small one lets them all start on a disk of any size.
  await Deno.writeTextFile(`${home}/gurt.toml`, "[tasks]\nhome_bytes = 67108864\n");
  await Deno.writeTextFile(
    `${home}/grants/echo.toml`,
    'tool = "example.echo"\nmode = "auto"\nmax_taint = "secret"\nresult_class = "private"\n',
  );
  return home;
}

const home = await newHome();
const floorTimes: number[] = [];
const structureTimes: number[] = [];
const serve = await startServe(home);
const structureDir = await Deno.makeTempDir({ dir: home, prefix: "structure-" });
const structure = await startStructure(structureDir);
let rows;
try {
  const task = await startTask(home);
  for (let i = 0; i < 50; i++) await call(home, task, `warm-${i}`);
  for (let i = 0; i < 50; i++) await callSocket(structure.socket, `warm-${i}`);

  // The floors and the calls in alternating batches, so that drift on a shared disk hits all.
  const latencies: number[] = [];
  let callTime = 0;
  for (let batch = 0; batch < BATCHES; batch++) {
    floorTimes.push(...await fsyncTimes(home, FSYNC_ROUNDS / BATCHES));
    for (let i = 0; i < SEQUENTIAL_CALLS / BATCHES; i++) {
      structureTimes.push(await callSocket(structure.socket, `s-${batch}-${i}`));
    }
    const batchStart = performance.now();
    for (let i = 0; i < SEQUENTIAL_CALLS / BATCHES; i++) {
      latencies.push(await call(home, task, `s-${batch}-${i}`));
    }
    callTime += performance.now() - batchStart;
  }
  const sequentialRate = SEQUENTIAL_CALLS / (callTime / 1000);
  const p50 = median(latencies);
  const structureP50 = median(structureTimes);

  const tasks = [task];
  while (tasks.length < CONCURRENT_TASKS) tasks.push(await startTask(home));
  const concurrentStart = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT_CALLERS }, async (_, c) => {
      const mine = tasks[c % tasks.length];
      for (let i = 0; i < CALLS_PER_CALLER; i++) await call(home, mine, `c${c}-${i}`);
    }),
  );
  const concurrentRate = (CONCURRENT_CALLERS * CALLS_PER_CALLER) /
    ((performance.now() - concurrentStart) / 1000);

  // One task, the same 32 callers: the per-task ledger serialises the decisions.
  const oneTaskStart = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT_CALLERS }, async (_, c) => {
      for (let i = 0; i < CALLS_PER_CALLER; i++) await call(home, task, `o${c}-${i}`);
    }),
  );
  const oneTaskRate = (CONCURRENT_CALLERS * CALLS_PER_CALLER) /
    ((performance.now() - oneTaskStart) / 1000);

  // Stop the tasks so no task user (as root) outlives the benchmark.
  for (const id of tasks) {
    await requestJson(adminSocketPath(home), { method: "POST", path: `/tasks/${id}/stop` });
  }
  rows = {
    p50,
    structureP50,
    sequentialRate,
    concurrentRate,
    oneTaskRate,
  };
} finally {
  await stopPeer(structure);
  await stopServe(serve);
  await Deno.remove(home, { recursive: true });
}

// Memory: a fresh core, idle, then with 100 open tasks.
const memoryHome = await newHome();
const idle = await startServe(memoryHome);
let idleRss: number;
let busyRss: number;
try {
  await requestJson(adminSocketPath(memoryHome), { method: "GET", path: "/approvals" });
  idleRss = rssMb(idle.child.pid);
  for (let i = 0; i < OPEN_TASKS; i++) await startTask(memoryHome);
  const listed = await requestJson(adminSocketPath(memoryHome), { method: "GET", path: "/tasks" });
  const open = (listed.body as { tasks: unknown[] }).tasks.length;
  if (open !== OPEN_TASKS) throw new Error(`expected ${OPEN_TASKS} open tasks, found ${open}`);
  busyRss = rssMb(idle.child.pid);
  // Stop the tasks so no task user (as root) outlives the benchmark.
  for (const task of (listed.body as { tasks: { id: string }[] }).tasks) {
    await requestJson(adminSocketPath(memoryHome), {
      method: "POST",
      path: `/tasks/${task.id}/stop`,
    });
  }
} finally {
  await stopServe(idle);
  await Deno.remove(memoryHome, { recursive: true });
}

const floor = median(floorTimes);
console.log(
  `fsync floor p50 ${floor.toFixed(3)} ms; the path needs ${PATH_SYNCS} syncs, so one call's ` +
    `bound is ${((PATH_SYNCS + 1) * floor).toFixed(3)} ms`,
);
/** The one-at-a-time p50 against (syncs + 1) x the floor, for each way of counting the syncs. */
const p50Rows = ([
  [PATH_SYNCS, "path syncs", "<= 1"],
  [FDATASYNCS_MADE, "fdatasyncs made", "(report)"],
  [SYNC_WAITS, "syncs waited in a row", "(report)"],
] as const).map(([syncs, counted, target]) => ({
  what: "POST /call example.echo, one at a time, p50",
  unit: "ms",
  value: rows.p50,
  baselineWhat: `(${syncs} ${counted} + 1) x fsync floor p50`,
  baseline: (syncs + 1) * floor,
  target,
}));
printTable([
  ...p50Rows,
  {
    what: "structure: bare Deno.serve making the path's syncs (1, then 2 at once), p50",
    unit: "ms",
    value: rows.structureP50,
    baselineWhat: `(${PATH_SYNCS} path syncs + 1) x fsync floor p50`,
    baseline: (PATH_SYNCS + 1) * floor,
    target: "(report)",
  },
  {
    what: "POST /call example.echo, one at a time, p50",
    unit: "ms",
    value: rows.p50,
    baselineWhat: "the structure above, p50",
    baseline: rows.structureP50,
    target: "(report)",
  },
  {
    what: "POST /call example.echo, one at a time",
    unit: "calls/s",
    value: rows.sequentialRate,
    baselineWhat: `1 / ((${PATH_SYNCS} + 1) x fsync floor)`,
    baseline: 1000 / ((PATH_SYNCS + 1) * floor),
    target: ">= 1",
  },
  {
    what: `POST /call, ${CONCURRENT_CALLERS} concurrent callers on ${CONCURRENT_TASKS} tasks`,
    unit: "calls/s",
    value: rows.concurrentRate,
    baselineWhat: "one at a time",
    baseline: rows.sequentialRate,
    target: ">= 4",
  },
  {
    what: `POST /call, ${CONCURRENT_CALLERS} concurrent callers on 1 task`,
    unit: "calls/s",
    value: rows.oneTaskRate,
    baselineWhat: "one at a time",
    baseline: rows.sequentialRate,
    target: ">= 4",
  },
  {
    what: `RSS of gurt serve, ${OPEN_TASKS} open tasks`,
    unit: "MB",
    value: busyRss,
    baselineWhat: "the 150 MB target",
    baseline: 150,
    target: "<= 1",
  },
  {
    what: `RSS of gurt serve, ${OPEN_TASKS} open tasks`,
    unit: "MB",
    value: busyRss,
    baselineWhat: "the same core with no task",
    baseline: idleRss,
    target: "<= 3",
  },
]);

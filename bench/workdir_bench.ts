/**
 * A task's start with a workdir (mod/workdir: the owner's folder checked, id-mapped by the helper,
 * listed, its protected paths and .env files covered, bound into the sandbox) against the same
 * task's start without one, in the same run, alternating, until the worker (`/bin/true`) exits.
 * The folder is a small project: a git repository of 200 files in 20 folders. The end of the task
 * (the second listing, the placeholders removed, the unmount) is not its start: it is printed
 * beside, not counted. Goal: the workdir adds at most 10 ms to the start. As root.
 */
import { TaskSandboxes } from "../mod/sandbox/mod.ts";
import { finishWorkdir, mountWorkdir, workdirBinds } from "../mod/workdir/mod.ts";
import { p50 } from "./measure.ts";
import { printTable } from "./table.ts";

const RUNS = 30;
const USER = { uid: 61237, gid: 61237 };
const OWNER = 61238;
const root = new URL("../", import.meta.url).pathname;

if (Deno.uid() !== 0) {
  console.log("workdir_bench runs as root (the id-mapped mount needs it); skipped");
  Deno.exit(0);
}

async function sh(script: string): Promise<void> {
  const out = await new Deno.Command("/bin/sh", { args: ["-c", script] }).output();
  if (!out.success) throw new Error(`sh failed: ${script}`);
}

const dir = await Deno.makeTempDir({ prefix: "gurt-bench-workdir-" });
await Deno.chmod(dir, 0o711);
await Deno.mkdir(`${dir}/run`, { mode: 0o700 });
await Deno.mkdir(`${dir}/home`, { mode: 0o700 });
await Deno.chown(`${dir}/home`, USER.uid, USER.gid);
const code = `${dir}/owner/code`;
const shop = `${code}/shop`;
await sh(`set -e; mkdir -p ${shop}; cd ${shop}; git init -q .
  for d in $(seq 1 20); do mkdir -p src/m$d; for f in $(seq 1 10); do echo "x = $d$f" > src/m$d/f$f.py; done; done
  echo 'K=v' > .env; chown -R ${OWNER}:${OWNER} ${dir}/owner; chmod 755 ${dir}/owner ${code}`);
const door = `${dir}/egress.sock`;
const listener = Deno.listen({ transport: "unix", path: door });
const { sandboxes } = await TaskSandboxes.prepare(`${dir}/run`, {
  limits: { memoryBytes: 1024 * 1024 * 1024, maxProcesses: 256, cpus: 1 },
  tmpBytes: 256 * 1024 * 1024,
  program: [root],
});
const record = {
  path: shop,
  readOnly: false,
  mode: "auto" as const,
  grant: "b",
  includeEnvFiles: false,
};
let n = 0;
const mountMs: number[] = [];
const ended: Promise<void>[] = [];

async function start(withWorkdir: boolean): Promise<{ start: number; end: number }> {
  const task = `bench${n++}`;
  const began = performance.now();
  const mounted = withWorkdir
    ? await mountWorkdir(record, {
      dir,
      index: 0,
      grantPath: code,
      helper: `${dir}/run/idmap-helper`,
      extra: [],
    }, USER)
    : null;
  const places = mounted === null ? null : workdirBinds([mounted]);
  if (mounted !== null) mountMs.push(performance.now() - began);
  const child = await sandboxes.spawn({
    task,
    home: `${dir}/home`,
    doors: [{ port: 3128, socket: door }],
    readOnly: [],
    argv: ["/bin/true"],
    env: { PATH: "/usr/bin:/bin" },
    user: USER,
    binds: places?.binds,
    cwd: places?.cwd ?? undefined,
    noNodes: places?.writable,
  });
  const [status] = await Promise.all([child.status, child.stdout.cancel(), child.stderr.cancel()]);
  if (!status.success) throw new Error(`the sandboxed /bin/true exited ${status.code}`);
  const startMs = performance.now() - began;
  const endBegan = performance.now();
  if (mounted !== null) await finishWorkdir(mounted);
  ended.push(sandboxes.end(task));
  return { start: startMs, end: performance.now() - endBegan };
}

try {
  const without: number[] = [];
  const withIt: number[] = [];
  const ends: number[] = [];
  for (let i = 0; i < RUNS + 3; i++) {
    const a = await start(false);
    const b = await start(true);
    if (i < 3) continue; // three warm-up rounds
    without.push(a.start);
    withIt.push(b.start);
    ends.push(b.end);
  }
  await Promise.all(ended);
  const added = p50(withIt) - p50(without);
  const paired = p50(withIt.map((ms, i) => ms - without[i]));
  printTable([{
    what: "task start with a workdir (p50, until exit)",
    unit: "ms",
    value: p50(withIt),
    baselineWhat: "the same start without one",
    baseline: p50(without),
    target: "<= 1.5",
  }]);
  console.log(`of which the mount (id-map, listing, covers): p50 ${p50(mountMs).toFixed(1)} ms`);
  const met = added <= 10 ? "met" : "not met";
  console.log(`\nadded by the workdir: ${added.toFixed(1)} ms (goal: at most 10 ms, ${met})`);
  console.log(
    `p50 of the paired differences (each start with one beside the one before it): ${
      paired.toFixed(1)
    } ms`,
  );
  console.log(
    `its end (listing, placeholders removed, unmount), not counted: p50 ${p50(ends).toFixed(1)} ms`,
  );
} finally {
  listener.close();
  await Deno.remove(dir, { recursive: true });
}

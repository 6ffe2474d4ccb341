/**
 * A worker's start in its task's sandbox (the cgroup stage, setpriv, bubblewrap with its
 * namespaces and mounts, the task init with one door on loopback, then `/bin/true`) against the
 * start a worker had before the sandbox (setpriv dropping to the task's user, then `/bin/true`),
 * in the same run, until each exits. Goal: the sandbox adds at most 50 ms. As root.
 */
import { TaskSandboxes } from "../mod/sandbox/mod.ts";
import { p50 } from "./measure.ts";
import { printTable } from "./table.ts";

const RUNS = 40;
const USER = { uid: 61236, gid: 61236 };
const root = new URL("../", import.meta.url).pathname;

async function timeEach(runs: number, work: () => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const start = performance.now();
    await work();
    if (i >= 3) times.push(performance.now() - start); // three warm-up runs
  }
  return times;
}

const dir = await Deno.makeTempDir({ prefix: "gurt-bench-sandbox-" });
await Deno.chmod(dir, 0o711);
await Deno.mkdir(`${dir}/run`, { mode: 0o700 });
await Deno.mkdir(`${dir}/home`, { mode: 0o700 });
await Deno.chown(`${dir}/home`, USER.uid, USER.gid);
const door = `${dir}/egress.sock`;
const listener = Deno.listen({ transport: "unix", path: door });
const { sandboxes, notices } = await TaskSandboxes.prepare(`${dir}/run`, {
  limits: { memoryBytes: 1024 * 1024 * 1024, maxProcesses: 256, cpus: 1 },
  tmpBytes: 256 * 1024 * 1024,
  program: [root],
});
console.log(notices.join("\n"));
try {
  const before = await timeEach(RUNS, async () => {
    const out = await new Deno.Command("/usr/bin/setpriv", {
      args: [
        `--reuid=${USER.uid}`,
        `--regid=${USER.gid}`,
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
        "/bin/true",
      ],
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin" },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    if (!out.success) throw new Error("setpriv /bin/true failed");
  });
  let n = 0;
  const ended: Promise<void>[] = [];
  const sandboxed = await timeEach(RUNS, async () => {
    const task = `bench${n++}`;
    const child = await sandboxes.spawn({
      task,
      home: `${dir}/home`,
      doors: [{ port: 3128, socket: door }],
      readOnly: [],
      argv: ["/bin/true"],
      env: { PATH: "/usr/bin:/bin" },
      user: USER,
    });
    const [status] = await Promise.all([
      child.status,
      child.stdout.cancel(),
      child.stderr.cancel(),
    ]);
    if (!status.success) throw new Error(`the sandboxed /bin/true exited ${status.code}`);
    ended.push(sandboxes.end(task)); // the end of a task is not its start
  });
  await Promise.all(ended);
  const added = p50(sandboxed) - p50(before);
  printTable([{
    what: "worker start in its sandbox (p50, until exit)",
    unit: "ms",
    value: p50(sandboxed),
    baselineWhat: "worker start before (setpriv /bin/true)",
    baseline: p50(before),
    target: "added <= 50 ms",
  }]);
  const met = added <= 50 ? "met" : "not met";
  console.log(`\nadded by the sandbox: ${added.toFixed(1)} ms (goal: at most 50 ms, ${met})`);
} finally {
  listener.close();
  await Deno.remove(dir, { recursive: true });
}

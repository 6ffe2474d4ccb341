/**
 * A `shell` call of `true` through the whole path (the task socket, the decision, two audit records
 * with their syncs, the taint file, the journal, the sandbox with its limits and pids cgroup) vs a
 * bare `bwrap … /bin/true` with the same namespaces and mounts, spawned directly, in the same run.
 * Target: the whole path costs at most 2 times the bare sandbox.
 */
import { adminSocketPath } from "../mod/cli/permissions.ts";
import { loadConfig } from "../mod/config/mod.ts";
import { Core } from "../mod/core/core.ts";
import { requestJson } from "../mod/net/mod.ts";
import { probeSystemLayout, sandboxArgs } from "../mod/runtime/mod.ts";
import { printTable } from "./table.ts";

const RUNS = 150;
const WARMUP = 15;

function p50(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function timeEach(runs: number, work: (i: number) => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await work(i);
    times.push(performance.now() - start);
  }
  return times;
}

const home = await Deno.makeTempDir({ prefix: "gurt-bench-runtime-" });
await Deno.mkdir(`${home}/grants`);
await Deno.writeTextFile(
  `${home}/grants/shell.toml`,
  'tool = "shell"\nmode = "auto"\nmax_taint = "secret"\nresult_class = "private"\n',
);
const config = loadConfig({ home, env: { BOX_VAULT: `${home}/vault.env` }, root: false });
const core = await Core.start(config, { log: () => {}, asRoot: false });
try {
  const admin = adminSocketPath(home);
  const started = await requestJson(admin, {
    method: "POST",
    path: "/tasks",
    body: { worker: { kind: "none" }, tools: ["shell"], budgetCents: null },
  });
  const task = (started.body as { task: { id: string } }).task.id;
  const socket = `${home}/tasks/${task}/broker.sock`;
  const call = async (i: number) => {
    const answer = await requestJson(socket, {
      method: "POST",
      path: "/call",
      body: { tool: "shell", input: { command: "true" }, key: `k${i}` },
    });
    const body = answer.body as { ok: boolean };
    if (!body.ok) throw new Error(`the call failed: ${JSON.stringify(answer.body)}`);
  };
  const layout = await probeSystemLayout();
  const bare = sandboxArgs([], { argv: ["/bin/true"], cwd: "/tmp", stdin: null }, {
    layout,
    tmpBytes: config.runtime.memory_bytes,
  });
  const bwrapTrue = async () => {
    const out = await new Deno.Command("bwrap", { args: bare, stdout: "piped", stderr: "piped" })
      .output();
    if (!out.success) throw new Error(`bwrap failed: ${new TextDecoder().decode(out.stderr)}`);
  };
  await timeEach(WARMUP, (i) => call(100_000 + i));
  await timeEach(WARMUP, bwrapTrue);
  // Interleaved rounds, so both sides see the same load on the machine.
  const path: number[] = [];
  const baseline: number[] = [];
  for (let round = 0; round < 3; round++) {
    path.push(...await timeEach(RUNS / 3, (i) => call(round * 1000 + i)));
    baseline.push(...await timeEach(RUNS / 3, bwrapTrue));
  }
  printTable([
    {
      what: "shell `true` through the task socket (p50)",
      unit: "ms",
      value: p50(path),
      baselineWhat: "bare bwrap … /bin/true (p50)",
      baseline: p50(baseline),
      target: "<= 2.0",
    },
    {
      what: "shell `true` calls/s through the task socket",
      unit: "/s",
      value: path.length / (path.reduce((s, t) => s + t, 0) / 1000),
      baselineWhat: "bare bwrap runs/s",
      baseline: baseline.length / (baseline.reduce((s, t) => s + t, 0) / 1000),
      target: ">= 0.5",
    },
  ]);
} finally {
  await core.close();
  await Deno.remove(home, { recursive: true });
}

/**
 * A `shell` call of `true` through the whole path (the task socket, the decision, two audit records
 * with their syncs, the taint file, the journal, the sandbox with its limits and pids cgroup) vs a
 * bare `bwrap … /bin/true` with the same namespaces and mounts, spawned directly, in the same run.
 * Target: the whole path costs at most 2 times the bare sandbox. A third row shows the runtime
 * alone (the same call's RunSpec through SandboxRuntime.run, no socket, no audit), to tell the
 * sandbox's own overhead (wrapper, limits, pids cgroup) from the core's; a fourth, the runtime
 * without its pids cgroup, to show what the process cap costs.
 */
import { adminSocketPath } from "../mod/config/mod.ts";
import { loadConfig } from "../mod/config/mod.ts";
import { Core } from "../mod/core/core.ts";
import { requestJson } from "../mod/net/mod.ts";
import { buildGrantSet, decide } from "../mod/policy/mod.ts";
import {
  probeSystemLayout,
  runSpecFor,
  type Runtime,
  sandboxArgs,
  SandboxRuntime,
} from "../mod/runtime/mod.ts";
import { printTable } from "./table.ts";
import { p50 } from "./measure.ts";

const RUNS = 200;
const WARMUP = 15;

async function timeEach(runs: number, work: (i: number) => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await work(i);
    times.push(performance.now() - start);
  }
  return times;
}

const SHELL_GRANT =
  'tool = "shell"\nmode = "auto"\nmax_taint = "secret"\nresult_class = "private"\n';

/** The RunSpec of `shell true` under SHELL_GRANT, built the only way there is: a decision. */
function shellTrueSpec() {
  const load = buildGrantSet([{
    file: "grants/shell.toml",
    bytes: new TextEncoder().encode(SHELL_GRANT),
  }], { appTools: new Set() });
  if (!load.ok) throw new Error("the bench grant is invalid");
  const outcome = decide({ tool: "shell", arguments: { command: "true" } }, {
    grants: load.grants,
    state: { taint: "private", untrusted: false },
    now: new Date(),
  });
  if (outcome.kind !== "allowed") throw new Error("the bench grant does not allow shell");
  return runSpecFor(outcome.decision);
}

const home = await Deno.makeTempDir({ prefix: "gurt-bench-runtime-" });
await Deno.mkdir(`${home}/grants`);
await Deno.writeTextFile(`${home}/grants/shell.toml`, SHELL_GRANT);
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
  // The same sandbox with no wrapper before it: no filter on fd 9 to load, so no --seccomp 9.
  const bare = sandboxArgs({ argv: ["/bin/true"], cwd: "/tmp", stdin: null }, {
    mounts: [],
    layout,
    tmpBytes: config.runtime.memory_bytes,
  }).filter((arg, i, all) => arg !== "--seccomp" && all[i - 1] !== "--seccomp");
  const bwrapTrue = async () => {
    const out = await new Deno.Command("bwrap", { args: bare, stdout: "piped", stderr: "piped" })
      .output();
    if (!out.success) throw new Error(`bwrap failed: ${new TextDecoder().decode(out.stderr)}`);
  };
  const alone: Runtime = (await SandboxRuntime.start(config.runtime)).runtime;
  if (!(alone instanceof SandboxRuntime)) throw new Error("bubblewrap does not work here");
  const uncapped: Runtime = (await SandboxRuntime.start(config.runtime, { cgroupRoot: null }))
    .runtime;
  const spec = shellTrueSpec();
  const runAlone = async () => {
    await alone.run(spec);
  };
  const runUncapped = async () => {
    await uncapped.run(spec);
  };
  await timeEach(WARMUP, (i) => call(100_000 + i));
  await timeEach(WARMUP, runAlone);
  await timeEach(WARMUP, runUncapped);
  await timeEach(WARMUP, bwrapTrue);
  // Interleaved one by one, so both sides see the same load on the machine.
  const path: number[] = [];
  const baseline: number[] = [];
  const runtimeOnly: number[] = [];
  const noCgroup: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    path.push(...await timeEach(1, () => call(i)));
    baseline.push(...await timeEach(1, bwrapTrue));
    runtimeOnly.push(...await timeEach(1, runAlone));
    noCgroup.push(...await timeEach(1, runUncapped));
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
      what: "shell `true` through SandboxRuntime.run alone (p50)",
      unit: "ms",
      value: p50(runtimeOnly),
      baselineWhat: "bare bwrap … /bin/true (p50)",
      baseline: p50(baseline),
      target: "<= 1.5",
    },
    {
      what: "the same, without the per-call pids cgroup (p50)",
      unit: "ms",
      value: p50(noCgroup),
      baselineWhat: "bare bwrap … /bin/true (p50)",
      baseline: p50(baseline),
      target: "<= 1.5",
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

/**
 * dist/gurt, the one-file gurt (issue 21), beside the checkout launcher measured in the same run: the
 * file's size, its first start (unpacking into an empty cache, Deno's cache empty for both), and
 * later starts of `gurt --version` and `gurt approvals` (against a running core), each the median of
 * runs taken in turn with the launcher's. Goal for later starts: at most 1.1 times the launcher.
 */
import { p50 } from "./measure.ts";
import { type BenchRow, printTable } from "./table.ts";

const root = new URL("../", import.meta.url).pathname.replace(/\/$/, "");
/** Runs of each later start: on a loaded machine single runs vary by half, so the median of many. */
const RUNS = 41;
const FLAGS = [
  "--quiet",
  "--unstable-worker-options",
  "--unstable-no-legacy-abort",
  "--allow-all",
  "--no-prompt",
  "--frozen",
];

async function sh(program: string, args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(program, { args, env, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`${program} ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** Milliseconds one run of `program args` takes, to its end. */
async function timed(program: string, args: string[], env: Record<string, string>) {
  const start = performance.now();
  await sh(program, args, env);
  return performance.now() - start;
}

/**
 * The medians of RUNS runs each of `gurt ARGS` by the file and by the launcher, taken in turn, each
 * first in every other pair, so neither always runs right after the other.
 */
async function later(
  what: string,
  args: string[],
  envs: { dist: Record<string, string>; launcher: Record<string, string> },
): Promise<BenchRow> {
  const ours: number[] = [];
  const theirs: number[] = [];
  await sh(dist, args, envs.dist);
  await sh(launcher, args, envs.launcher);
  for (let i = 0; i < RUNS; i++) {
    if (i % 2 === 0) {
      ours.push(await timed(dist, args, envs.dist));
      theirs.push(await timed(launcher, args, envs.launcher));
    } else {
      theirs.push(await timed(launcher, args, envs.launcher));
      ours.push(await timed(dist, args, envs.dist));
    }
  }
  return {
    what: `later start: ${what}`,
    unit: "ms",
    value: p50(ours),
    baselineWhat: "the checkout launcher",
    baseline: p50(theirs),
    target: "<= 1.1",
  };
}

await sh("bash", [`${root}/tools/build_dist.sh`, "--if-stale"]);
const dist = `${root}/dist/gurt`;
const work = await Deno.makeTempDir({ prefix: "gurt-dist-bench-" });
await Deno.chmod(work, 0o711);
const launcher = `${work}/launcher`;
await Deno.writeTextFile(
  launcher,
  `#!/bin/sh\nexec "${Deno.execPath()}" run ${FLAGS.join(" ")} --config "${root}/deno.json" ` +
    `"${root}/main.ts" "$@"\n`,
  { mode: 0o755 },
);
const home = `${work}/home`;
let serve: Deno.ChildProcess | null = null;
try {
  const rows: BenchRow[] = [];
  const size = (await Deno.stat(dist)).size / 1e6;
  const deno = (await Deno.stat(Deno.execPath())).size / 1e6;
  rows.push({
    what: "dist/gurt, the file",
    unit: "MB",
    value: size,
    baselineWhat: "the Deno binary it carries",
    baseline: deno,
    target: "<= 1.0",
  });

  // First starts: an empty cache for the file, an empty Deno cache for both.
  const firsts: number[] = [];
  const launcherFirsts: number[] = [];
  for (let i = 0; i < 3; i++) {
    firsts.push(
      await timed(dist, ["--version"], {
        GURT_CACHE: `${work}/cache-${i}`,
        DENO_DIR: `${work}/deno-first-${i}`,
      }),
    );
    launcherFirsts.push(
      await timed(launcher, ["--version"], { DENO_DIR: `${work}/deno-launcher-first-${i}` }),
    );
  }
  rows.push({
    what: "first start: unpack, gurt --version",
    unit: "ms",
    value: p50(firsts),
    baselineWhat: "launcher, empty Deno cache",
    baseline: p50(launcherFirsts),
    target: "<= 10",
  });

  // Later starts, with warm caches: the file in turn with the launcher, so load skews both alike.
  // Each has a Deno cache of its own, as on a real machine: sharing one, each run of the one made
  // the next run of the other slower (the file's --version took 1.3 times as long).
  const env = { GURT_CACHE: `${work}/cache-0`, DENO_DIR: `${work}/deno-warm` };
  const launcherEnv = { DENO_DIR: `${work}/deno-warm-launcher` };
  await sh(dist, ["--version"], env);
  await sh(launcher, ["--version"], launcherEnv);
  rows.push(await later("gurt --version", ["--version"], { dist: env, launcher: launcherEnv }));

  // gurt approvals asks a running core; measured once the core has started its portal, whose
  // own start would otherwise take the CPU from the first runs.
  await Deno.mkdir(home, { mode: 0o711 });
  serve = new Deno.Command(launcher, {
    args: ["--home", home, "serve"],
    env: launcherEnv,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = serve.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!said.includes("admin socket ready") || !said.includes("portal at")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`gurt serve stopped: ${said}`);
    said += value;
  }
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })();
  rows.push(
    await later("gurt approvals", ["--home", home, "approvals"], {
      dist: env,
      launcher: launcherEnv,
    }),
  );
  printTable(rows);
} finally {
  if (serve !== null) {
    serve.kill("SIGTERM");
    await serve.status;
  }
  await Deno.remove(work, { recursive: true });
}

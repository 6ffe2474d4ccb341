/**
 * POST /v1/exec of `true` against the real guest daemon (`main.ts guest`, a child process), vs
 * spawning `true` directly from Deno in the same run: p50 latency and execs per second.
 * Target: the HTTP path costs at most 1.3 times the bare spawn.
 */
import { printTable } from "./table.ts";
import { p50 } from "./measure.ts";

const RUNS = 400;
const WARMUP = 40;
const root = new URL("../", import.meta.url).pathname;

async function timeEach(runs: number, work: () => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return times;
}

function perSecond(times: number[]): number {
  return times.length / (times.reduce((sum, t) => sum + t, 0) / 1000);
}

const spawnTrue = async () => {
  const output = await new Deno.Command("true", { stdout: "piped", stderr: "piped" }).output();
  if (output.code !== 0) throw new Error("true failed");
};

const spawnTrueInGroup = async () => {
  const child = new Deno.Command("true", { stdout: "piped", stderr: "piped", detached: true })
    .spawn();
  await Promise.all([child.stdout.cancel(), child.stderr.cancel()]);
  if (!(await child.status).success) throw new Error("true failed");
};

const workspace = await Deno.makeTempDir({ prefix: "gurt-bench-ws-" });
const token = "bench-token-0123456789";
const daemon = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "--unstable-worker-options",
    "--allow-all",
    `${root}main.ts`,
    "guest",
    "--workspace",
    workspace,
    "--exec-port",
    "0",
    "--host-port",
    "0",
  ],
  env: { BOX_TOKEN: token },
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const reader = daemon.stdout.pipeThrough(new TextDecoderStream()).getReader();
let line = "";
while (!line.includes("\n")) {
  const { done, value } = await reader.read();
  if (done) throw new Error("the guest exited before listening");
  line += value;
}
const exec = JSON.parse(line.slice(0, line.indexOf("\n"))).exec as string;
const body = JSON.stringify({ command: ["true"] });
const postTrue = async () => {
  const response = await fetch(`${exec}/v1/exec`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body,
  });
  const answer = await response.json();
  if (answer.exit_code !== 0) throw new Error(`exec failed: ${JSON.stringify(answer)}`);
};

try {
  await timeEach(WARMUP, spawnTrue);
  await timeEach(WARMUP, postTrue);
  await timeEach(WARMUP, spawnTrueInGroup);
  // Interleave halves so drift on a shared machine hits both sides alike.
  const bare = [...await timeEach(RUNS / 2, spawnTrue)];
  const http = [...await timeEach(RUNS / 2, postTrue)];
  bare.push(...await timeEach(RUNS / 2, spawnTrue));
  http.push(...await timeEach(RUNS / 2, postTrue));
  const grouped = await timeEach(RUNS, spawnTrueInGroup);
  printTable([
    {
      what: "POST /v1/exec `true`, p50",
      unit: "ms",
      value: p50(http),
      baselineWhat: "Deno.Command `true`, p50",
      baseline: p50(bare),
      target: "<= 1.3",
    },
    {
      what: "POST /v1/exec `true`, execs/s",
      unit: "/s",
      value: perSecond(http),
      baselineWhat: "Deno.Command `true`, execs/s",
      baseline: perSecond(bare),
      target: ">= 0.77",
    },
    {
      what: "POST /v1/exec `true`, p50",
      unit: "ms",
      value: p50(http),
      baselineWhat: "Deno.Command `true` in its own process group (detached), p50",
      baseline: p50(grouped),
      target: "<= 1.3",
    },
  ]);
} finally {
  await fetch(`${exec}/v1/shutdown`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
  }).then((response) => response.body?.cancel());
  await daemon.status;
  await reader.cancel();
  await Deno.remove(workspace, { recursive: true });
}

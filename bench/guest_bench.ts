/**
 * POST /v1/exec of `true` against the real guest daemon (`main.ts guest`, a child process), vs
 * spawning `true` directly from Deno in the same run: p50 latency and execs per second.
 * Target: the HTTP path costs at most 1.3 times the bare spawn. The client is what curl or an
 * SDK is, one kept-alive HTTP/1.1 connection; `fetch` is measured too, for what its own
 * machinery adds on the client's side. The floor of any exec over HTTP in Deno here is measured
 * beside them: a bare Deno.serve that starts the command through the same session helper and
 * reads its pipes, and nothing else (bench/guest_floor_server.ts).
 */
import { gurtInvocation } from "../mod/core/self_command.ts";
import { Http1Client } from "./http1_client.ts";
import { printTable } from "./table.ts";
import { guestArgs } from "../tests/kit/gurt.ts";
import { p50 } from "./measure.ts";

const RUNS = 400;
const WARMUP = 40;

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

const workspace = await Deno.makeTempDir({ prefix: "gurt-bench-ws-" });
const token = "bench-token-0123456789";
const guest = gurtInvocation(["guest", ...guestArgs(workspace)]);
/** Starts a server that prints `{"exec": URL}` as its first line, and reads that line. */
async function listening(
  program: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ child: Deno.ChildProcess; url: string; lines: ReadableStreamDefaultReader<string> }> {
  const child = new Deno.Command(program, { args, env, stdout: "piped", stderr: "inherit" })
    .spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let line = "";
  while (!line.includes("\n")) {
    const { done, value } = await lines.read();
    if (done) throw new Error(`${args.at(-1)} exited before listening`);
    line += value;
  }
  return { child, url: JSON.parse(line.slice(0, line.indexOf("\n"))).exec as string, lines };
}

const daemon = await listening(guest.program, guest.args, { BOX_TOKEN: token });
const exec = daemon.url;
const floorServer = await listening(Deno.execPath(), [
  "run",
  "--allow-all",
  "--unstable-no-legacy-abort",
  new URL("./guest_floor_server.ts", import.meta.url).pathname,
]);
const floorUrl = floorServer.url;
const floorClient = await Http1Client.connect(floorUrl);
const body = JSON.stringify({ command: ["true"] });
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
const client = await Http1Client.connect(exec);
const postTrue = async () => {
  const answer = await client.request("POST", "/v1/exec", { headers, body });
  if (answer.status !== 200 || JSON.parse(answer.body).exit_code !== 0) {
    throw new Error(`exec failed: ${answer.status} ${answer.body}`);
  }
};
const floorTrue = async () => {
  const answer = await floorClient.request("POST", "/", { body });
  if (answer.status !== 200 || JSON.parse(answer.body).exit_code !== 0) {
    throw new Error(`floor exec failed: ${answer.status} ${answer.body}`);
  }
};
const fetchTrue = async () => {
  const response = await fetch(`${exec}/v1/exec`, {
    method: "POST",
    headers,
    body,
  });
  const answer = await response.json();
  if (answer.exit_code !== 0) throw new Error(`exec failed: ${JSON.stringify(answer)}`);
};

try {
  await timeEach(WARMUP, spawnTrue);
  await timeEach(WARMUP, postTrue);
  await timeEach(WARMUP, fetchTrue);
  await timeEach(WARMUP, floorTrue);
  // Interleave quarters so drift on a shared machine hits every side alike.
  const bare: number[] = [];
  const http: number[] = [];
  const fetched: number[] = [];
  const floor: number[] = [];
  for (let round = 0; round < 4; round++) {
    bare.push(...await timeEach(RUNS / 4, spawnTrue));
    http.push(...await timeEach(RUNS / 4, postTrue));
    fetched.push(...await timeEach(RUNS / 4, fetchTrue));
    floor.push(...await timeEach(RUNS / 4, floorTrue));
  }
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
      what: "POST /v1/exec `true` with `fetch` as the client, p50",
      unit: "ms",
      value: p50(fetched),
      baselineWhat: "Deno.Command `true`, p50",
      baseline: p50(bare),
      target: "(report)",
    },
    {
      what: "floor: bare Deno.serve, session helper, pipes read, p50",
      unit: "ms",
      value: p50(floor),
      baselineWhat: "Deno.Command `true`, p50",
      baseline: p50(bare),
      target: "(report)",
    },
    {
      what: "POST /v1/exec `true`, p50",
      unit: "ms",
      value: p50(http),
      baselineWhat: "the floor above, p50",
      baseline: p50(floor),
      target: "(report)",
    },
  ]);
} finally {
  client.close();
  await floorClient.request("POST", "/shutdown", {}).catch(() => {});
  floorClient.close();
  await floorServer.child.status;
  await floorServer.lines.cancel();
  await fetch(`${exec}/v1/shutdown`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
  }).then((response) => response.body?.cancel());
  await daemon.child.status;
  await daemon.lines.cancel();
  await Deno.remove(workspace, { recursive: true });
}

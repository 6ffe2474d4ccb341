/**
 * How soon `gurt mcp` answers its agent: from spawning it, launched as a task's MCP configuration
 * launches it (gurtInvocation), to the answer to initialize and to tools/list, with Claude Code's
 * opening sent at once (server/discover, initialize at 2025-11-25, initialized, tools/list). Its
 * task socket is a stand-in that answers GET /tools with a standard box's seven tools at once, so
 * only the relay is timed. The goal is 150 ms (issue 20: Droid lists tools once, early); the
 * baseline, measured in the same run in turns with the relay, is `deno run` of an empty script,
 * spawn to exit, which no Deno program can beat.
 */
import { gurtInvocation } from "../mod/core/mod.ts";
import { standardRegistry } from "../mod/tools/mod.ts";
import { p50 } from "./measure.ts";
import { type BenchRow, printTable } from "./table.ts";

const RUNS = 20;
const GOAL_MS = 150;

const dir = await Deno.makeTempDir({ prefix: "gurt-mcp-bench-" });
const socket = `${dir}/broker.sock`;
const empty = `${dir}/empty.ts`;
await Deno.writeTextFile(empty, "");
const registry = standardRegistry();
const listing = registry.list([
  "example.echo",
  "example.spend",
  "example.note",
  "read_file",
  "write_file",
  "shell",
  "http_fetch",
]);
const server = Deno.serve(
  { path: socket, transport: "unix", onListen: () => {} },
  (request) =>
    new URL(request.url).pathname === "/tools"
      ? Response.json(listing)
      : new Response("not here", { status: 404 }),
);

const OPENING = [
  { jsonrpc: "2.0", id: 0, method: "server/discover", params: {} },
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: { roots: {}, elicitation: {} },
      clientInfo: { name: "bench", version: "0" },
    },
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
].map((message) => JSON.stringify(message) + "\n").join("");

/** One `gurt mcp`: ms from spawn to the initialize answer and to the tools/list answer. */
async function relayOnce(): Promise<{ initialize: number; list: number }> {
  const { program, args } = gurtInvocation(["mcp"]);
  const start = performance.now();
  const child = new Deno.Command(program, {
    args,
    // What Codex gives its MCP servers: BOX_*, HOME and PATH.
    env: {
      BOX_SOCKET: socket,
      BOX_TASK: "bench",
      HOME: Deno.env.get("HOME") ?? "/",
      PATH: Deno.env.get("PATH") ?? "",
    },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(OPENING));
  let initialize = NaN;
  let list = NaN;
  let text = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    let end: number;
    while ((end = text.indexOf("\n")) !== -1) {
      const message = JSON.parse(text.slice(0, end));
      text = text.slice(end + 1);
      if (message.id === 1) initialize = performance.now() - start;
      if (message.id === 2) {
        list = performance.now() - start;
        if (message.result?.tools?.length !== listing.length + 1) {
          throw new Error(`tools/list answered ${JSON.stringify(message)}`);
        }
        await writer.close();
      }
    }
  }
  if (!(await child.status).success || Number.isNaN(list)) {
    throw new Error("gurt mcp did not answer tools/list and exit cleanly");
  }
  return { initialize, list };
}

/** `deno run` of an empty script: ms from spawn to exit. */
async function bareOnce(): Promise<number> {
  const start = performance.now();
  const status = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", empty],
    stdin: "null",
    stdout: "null",
    stderr: "inherit",
  }).spawn().status;
  if (!status.success) throw new Error("deno run of an empty script failed");
  return performance.now() - start;
}

try {
  await relayOnce(); // warm Deno's caches, as a box that has run gurt before has them
  await bareOnce();
  const initialize: number[] = [];
  const list: number[] = [];
  const bare: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const relay = await relayOnce();
    initialize.push(relay.initialize);
    list.push(relay.list);
    bare.push(await bareOnce());
  }
  const bareMs = p50(bare);
  const worst = (values: number[]) => Math.max(...values);
  const rows: BenchRow[] = [
    {
      what: `gurt mcp, spawn to initialize answered, p50 of ${RUNS}`,
      unit: "ms",
      value: p50(initialize),
      baselineWhat: "deno run of an empty script, spawn to exit, same run",
      baseline: bareMs,
      target: "(report)",
    },
    {
      what: `gurt mcp, spawn to tools/list answered, p50 of ${RUNS}`,
      unit: "ms",
      value: p50(list),
      baselineWhat: "deno run of an empty script, spawn to exit, same run",
      baseline: bareMs,
      target: "(report)",
    },
    {
      what: `gurt mcp, spawn to tools/list answered, p50 of ${RUNS}`,
      unit: "ms",
      value: p50(list),
      baselineWhat: `the ${GOAL_MS} ms goal`,
      baseline: GOAL_MS,
      target: "<= 1",
    },
    {
      what: `gurt mcp, spawn to tools/list answered, slowest of ${RUNS}`,
      unit: "ms",
      value: worst(list),
      baselineWhat: `the ${GOAL_MS} ms goal`,
      baseline: GOAL_MS,
      target: "(report)",
    },
  ];
  printTable(rows);
} finally {
  await server.shutdown();
  await Deno.remove(dir, { recursive: true });
}

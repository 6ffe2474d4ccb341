/**
 * Apps (issue 29), on a real `gurt serve` with @modelcontextprotocol/server-everything (as
 * install.sh --test installs it) as an app, each figure beside a baseline measured in this run:
 *
 * - an app tool call, server-everything's echo (the app `benchapp`) through a task's POST /call
 *   (grant auto), p50, against the same server called directly by the MCP SDK's Client over
 *   stdio (StdioClientTransport running node on the same file), plus the broker's own /call
 *   floor, example.echo through the same task socket; the target is app p50 <= 1.5 x direct p50
 *   + floor p50 (reported too: against direct + floor + one fdatasync, the sync an app's call
 *   makes in a row that example.echo's does not);
 * - the first call's cold start, the app's server not running (stopped by [apps] idle_ms): POST
 *   /call to its answer, against `node` starting the same server bare and answering initialize and
 *   tools/list (the least any client must wait for before its first call);
 * - the resident memory (VmRSS) of the `gurt serve` process with 10 apps installed, each started
 *   once and then idle (stopped), against the same core with none.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { adminSocketPath } from "../mod/config/mod.ts";
import { readAppFolder } from "../mod/apps/mod.ts";
import { postCall } from "../mod/net/mod.ts";
import {
  grant,
  rawJson,
  type ServeProcess,
  startServe,
  startTask,
  stopAllTasks,
} from "../tests/kit/mod.ts";
import { EVERYTHING, everythingManifest, haveTestApps } from "../tests/apps/app_kit.ts";
import { fsyncTimes, p50 } from "./measure.ts";
import { type BenchRow, printTable } from "./table.ts";

const WARM_CALLS = 400;
const BATCHES = 8;
const COLD_RUNS = 8;
const IDLE_APPS = 10;
/** Short, so that an app's server stops between the cold samples; longer than a batch's gap. */
const IDLE_MS = 1500;

if (!haveTestApps) {
  console.log(`skipped: no ${EVERYTHING} (install.sh --test installs it)`);
  Deno.exit(0);
}

const sources = await Deno.makeTempDir({ prefix: "gurt-apps-bench-src-" });
const manifest = everythingManifest();
await Deno.writeTextFile(`${sources}/app.toml`, manifest);
const files = await readAppFolder(sources);

/** The apps' names are the bench's own: an app's user is named after it, and tests may run now. */
interface Box {
  home: string;
  serve: ServeProcess;
  admin(method: string, path: string, body?: unknown): ReturnType<typeof rawJson>;
  close(): Promise<void>;
}

async function startBox(): Promise<Box> {
  const home = await Deno.makeTempDir({ prefix: "gurt-apps-bench-" });
  await Deno.mkdir(`${home}/grants`);
  await Deno.writeTextFile(
    `${home}/gurt.toml`,
    `[tasks]\nhome_bytes = 67108864\n[portal]\nlisten = "127.0.0.1:0"\n[apps]\nidle_ms = ${IDLE_MS}\n`,
  );
  const serve = await startServe(home, { env: { BOX_VAULT: `${home}/vault.env` } });
  if (serve.exited !== null) throw new Error(`gurt serve did not start: ${serve.stderr()}`);
  const admin = (method: string, path: string, body?: unknown) =>
    rawJson(adminSocketPath(home), { method, path, body });
  return {
    home,
    serve,
    admin,
    async close() {
      await stopAllTasks(serve).catch(() => {});
      // An app's user (as root) outlives the home unless its app is removed.
      const apps = await admin("GET", "/apps").catch(() => null);
      for (const app of (apps?.body?.apps ?? []) as { name: string }[]) {
        await admin("DELETE", `/apps/${app.name}`).catch(() => {});
      }
      await serve.stop();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

async function addApp(box: Box, name: string): Promise<void> {
  const added = await box.admin("POST", "/apps", { name, files });
  if (added.status !== 200) throw new Error(`app ${name} not added: ${JSON.stringify(added.body)}`);
}

function rssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

/** Waits until every app of the box says `stopped` (its idle stop), then a moment for its exit. */
async function allStopped(box: Box): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    const apps = (await box.admin("GET", "/apps")).body.apps as { state: string }[];
    if (apps.every((app) => app.state === "stopped")) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("the apps did not stop when idle");
}

let keys = 0;
async function timedCall(socket: string, tool: string, input: unknown): Promise<number> {
  const started = performance.now();
  const answer = await postCall(socket, { tool, input, key: `k${keys++}` });
  const took = performance.now() - started;
  if (answer.body.ok !== true) throw new Error(`${tool}: ${JSON.stringify(answer.body)}`);
  return took;
}

/** `node` starting the server bare: ms from spawn to the answer to tools/list. */
async function bareStart(): Promise<number> {
  const started = performance.now();
  const child = new Deno.Command("node", {
    args: [EVERYTHING, "stdio"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(
    [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "bench", version: "0" },
        },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
    ].map((message) => JSON.stringify(message) + "\n").join(""),
  ));
  let took = NaN;
  let text = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    let end: number;
    while ((end = text.indexOf("\n")) !== -1) {
      const message = JSON.parse(text.slice(0, end));
      text = text.slice(end + 1);
      if (message.id === 2) {
        took = performance.now() - started;
        if (!Array.isArray(message.result?.tools)) throw new Error(JSON.stringify(message));
        await writer.close();
      }
    }
  }
  await child.status;
  if (Number.isNaN(took)) throw new Error("node did not answer tools/list");
  return took;
}

const rows: BenchRow[] = [];
try {
  const box = await startBox();
  const direct = new Client({ name: "bench", version: "0" }, { capabilities: {} });
  try {
    await addApp(box, "benchapp");
    await addApp(box, "benchcold");
    for (const tool of ["benchapp.echo", "benchcold.echo", "example.echo"]) {
      await Deno.writeTextFile(
        `${box.home}/grants/${tool.replace(".", "-")}.toml`,
        grant({ tool }),
      );
    }
    const task = await startTask(box.serve, {
      tools: ["benchapp.echo", "benchcold.echo", "example.echo"],
    });
    const socket = `${box.home}/tasks/${task}/broker.sock`;
    await direct.connect(
      new StdioClientTransport({ command: "node", args: [EVERYTHING, "stdio"], stderr: "ignore" }),
    );
    const directCall = async () => {
      const started = performance.now();
      const result = await direct.callTool({ name: "echo", arguments: { message: "hello" } });
      const took = performance.now() - started;
      if (result.isError) throw new Error(JSON.stringify(result));
      return took;
    };
    for (let i = 0; i < 30; i++) {
      await timedCall(socket, "benchapp.echo", { message: "hello" });
      await timedCall(socket, "example.echo", { text: "hello" });
      await directCall();
    }

    // The three in alternating batches, so that drift on a shared machine hits all of them.
    const app: number[] = [];
    const floor: number[] = [];
    const bare: number[] = [];
    const syncs: number[] = [];
    for (let batch = 0; batch < BATCHES; batch++) {
      syncs.push(...await fsyncTimes(box.home, WARM_CALLS / BATCHES));
      for (let i = 0; i < WARM_CALLS / BATCHES; i++) {
        app.push(await timedCall(socket, "benchapp.echo", { message: "hello" }));
      }
      for (let i = 0; i < WARM_CALLS / BATCHES; i++) bare.push(await directCall());
      for (let i = 0; i < WARM_CALLS / BATCHES; i++) {
        floor.push(await timedCall(socket, "example.echo", { text: "hello" }));
      }
    }
    const [appP50, directP50, floorP50, syncP50] = [p50(app), p50(bare), p50(floor), p50(syncs)];
    console.log(
      `app call p50 ${appP50.toFixed(3)} ms; direct SDK call p50 ${
        directP50.toFixed(3)
      } ms; example.echo /call floor p50 ${floorP50.toFixed(3)} ms; fdatasync p50 ${
        syncP50.toFixed(3)
      } ms`,
    );
    rows.push(
      {
        what: `POST /call of an app's echo (server-everything), p50 of ${WARM_CALLS}`,
        unit: "ms",
        value: appP50,
        baselineWhat: "1.5 x direct SDK call p50 + example.echo /call p50",
        baseline: 1.5 * directP50 + floorP50,
        target: "<= 1",
      },
      {
        what: `POST /call of an app's echo (server-everything), p50 of ${WARM_CALLS}`,
        unit: "ms",
        value: appP50,
        baselineWhat: "SDK Client over stdio calling echo directly, p50",
        baseline: directP50,
        target: "(report)",
      },
      {
        // The path's own: an app's answer does not come at once, so its tool.call line is synced
        // alone before the tool.result line (example.echo's share one sync): one more in a row.
        what: `POST /call of an app's echo (server-everything), p50 of ${WARM_CALLS}`,
        unit: "ms",
        value: appP50,
        baselineWhat: "direct SDK call p50 + example.echo /call p50 + 1 fdatasync p50",
        baseline: directP50 + floorP50 + syncP50,
        target: "(report)",
      },
      {
        what: `POST /call of an app's echo (server-everything), p50 of ${WARM_CALLS}`,
        unit: "ms",
        value: appP50,
        baselineWhat: "POST /call example.echo (built in), p50",
        baseline: floorP50,
        target: "(report)",
      },
    );

    // Cold starts: the app `benchcold` stopped when idle, then its first call; bare node between.
    const cold: number[] = [];
    const bareStarts: number[] = [];
    await bareStart();
    for (let run = 0; run < COLD_RUNS; run++) {
      await allStopped(box);
      cold.push(await timedCall(socket, "benchcold.echo", { message: "hello" }));
      bareStarts.push(await bareStart());
    }
    rows.push({
      what: `first call of a stopped app, POST /call to answer, p50 of ${COLD_RUNS}`,
      unit: "ms",
      value: p50(cold),
      baselineWhat: "node starting it bare to initialize + tools/list answered, p50",
      baseline: p50(bareStarts),
      target: "(report)",
    });
  } finally {
    await direct.close().catch(() => {});
    await box.close();
  }

  // Memory: a fresh core with no app, then with 10 added (each started once to list its tools) and
  // idle (their servers stopped).
  const memory = await startBox();
  try {
    await memory.admin("GET", "/apps");
    const none = rssMb(memory.serve.child.pid);
    for (let i = 0; i < IDLE_APPS; i++) await addApp(memory, `bench${i}`);
    await allStopped(memory);
    const idle = rssMb(memory.serve.child.pid);
    rows.push(
      {
        what: `RSS of gurt serve, ${IDLE_APPS} apps installed, started once, idle`,
        unit: "MB",
        value: idle,
        baselineWhat: "the same core with no app",
        baseline: none,
        target: "<= 1.5",
      },
      {
        what: `RSS of gurt serve, ${IDLE_APPS} apps installed, started once, idle`,
        unit: "MB",
        value: idle,
        baselineWhat: "the core's 150 MB (issue 5's target, for 100 open tasks)",
        baseline: 150,
        target: "(report)",
      },
    );
  } finally {
    await memory.close();
  }
} finally {
  await Deno.remove(sources, { recursive: true });
}
printTable(rows);

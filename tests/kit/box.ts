/**
 * A real core for tests: started in-process on a temporary home, driven over its real sockets.
 * Tasks use the worker `none`, so the test is the worker and speaks to the task socket itself.
 */
import { type AuditFileOps, AuditWriter } from "../../mod/audit/mod.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { loadConfig } from "../../mod/config/mod.ts";
import { Core, type CoreOptions } from "../../mod/core/core.ts";
import { requestJson } from "../../mod/net/mod.ts";
import type { AppTool } from "../../mod/tools/mod.ts";
import { defineTool, exampleApp, ToolRegistry } from "../../mod/tools/mod.ts";
import { z } from "zod";
import { assertEquals } from "../assert.ts";
import { grant } from "./grant.ts";
import { grantFiles, layOut, makeHome, tomlFile } from "./home.ts";
import { until } from "./wait.ts";

/** A parsed JSON answer, read by assertions field by field. */
// deno-lint-ignore no-explicit-any
export type Json = any;

/** What a test gets: the core, its home, and helpers for its sockets. */
export interface TestBox {
  core: Core;
  home: string;
  /** Every line the core printed. */
  logs: string[];
  admin(
    method: "GET" | "POST" | "PUT" | "DELETE",
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Json }>;
  startTask(
    options?: { tools?: string[]; budgetCents?: number | null; prompt?: string },
  ): Promise<TestTask>;
  writeGrant(id: string, toml: string): Promise<void>;
  removeGrant(id: string): Promise<void>;
  /** Every audit record, parsed, in order. */
  records(): Promise<Json[]>;
  /**
   * Closes the core and starts a new one on the same home, with these audit file ops if given,
   * after `whileDown` (which may change the home as a crash would have left it).
   */
  restart(
    options?: { fileOps?: Partial<AuditFileOps>; whileDown?: () => Promise<void> },
  ): Promise<void>;
  close(): Promise<void>;
}

/** A task the test drives over its socket. */
export interface TestTask {
  id: string;
  socket: string;
  request(method: "GET" | "POST", path: string, body?: unknown, signal?: AbortSignal): Promise<{
    status: number;
    body: Json;
  }>;
  call(tool: string, input: unknown, key: string, signal?: AbortSignal): Promise<Json>;
  /** Sends a call without waiting: its answer, and whether that has come yet. */
  send(tool: string, input: unknown, key: string): { answer: Promise<Json>; answered(): boolean };
}

/** Options for a test box. */
export interface BoxOptions {
  grants?: Record<string, string>;
  toml?: string;
  tools?: AppTool<never>[];
  fileOps?: Partial<AuditFileOps>;
  core?: CoreOptions;
  env?: Record<string, string>;
  /** A home of the test's own choosing (made here), instead of a fresh temporary one. */
  home?: string;
  /** The fresh home's name prefix. */
  prefix?: string;
}

/** Starts a core on a fresh home. */
export async function startBox(options: BoxOptions = {}): Promise<TestBox> {
  const home = options.home ?? await makeHome({ prefix: options.prefix ?? "gurt-core-" });
  await layOut(home, {
    dirs: ["grants"],
    files: { ...grantFiles(options.grants ?? {}), ...tomlFile(options.toml) },
  });
  const config = loadConfig({
    home,
    env: { BOX_VAULT: `${home}/vault.env`, ...options.env },
    root: false,
  });
  const logs: string[] = [];
  const registry = new ToolRegistry([...exampleApp, ...(options.tools ?? [])]);
  const start = (fileOps: Partial<AuditFileOps> | undefined) =>
    Core.start(config, {
      log: (line) => logs.push(line),
      registry,
      asRoot: false,
      openAudit: (dir, open) => AuditWriter.open(dir, { ...open, fileOps }),
      ...options.core,
    });
  const admin = adminSocketPath(home);
  const box: TestBox = {
    core: await start(options.fileOps),
    home,
    logs,
    admin: (method, path, body) => requestJson(admin, { method, path, body }) as Promise<Json>,
    async startTask(task = {}) {
      const answer = await requestJson(admin, {
        method: "POST",
        path: "/tasks",
        body: {
          worker: { kind: "none" },
          ...(task.prompt === undefined ? {} : { prompt: task.prompt }),
          tools: task.tools ?? ["example.echo"],
          budgetCents: task.budgetCents ?? null,
        },
      });
      if (answer.status !== 200) {
        throw new Error(`task start failed: ${JSON.stringify(answer.body)}`);
      }
      const id = (answer.body as { task: { id: string } }).task.id;
      const socket = `${home}/tasks/${id}/broker.sock`;
      const request = (method: string, path: string, body?: unknown, signal?: AbortSignal) =>
        requestJson(socket, { method, path, body, signal }) as Promise<Json>;
      return {
        id,
        socket,
        request,
        async call(tool, input, key, signal) {
          return (await request("POST", "/call", { tool, input, key }, signal)).body;
        },
        send(tool, input, key) {
          let answered = false;
          const answer = request("POST", "/call", { tool, input, key }).then(({ body }) => {
            answered = true;
            return body;
          });
          return { answer, answered: () => answered };
        },
      };
    },
    writeGrant: (id, toml) => Deno.writeTextFile(`${home}/grants/${id}.toml`, toml),
    removeGrant: (id) => Deno.remove(`${home}/grants/${id}.toml`),
    records: () => auditRecords(home),
    async restart(restart = {}) {
      await box.core.close();
      await restart.whileDown?.();
      box.core = await start(restart.fileOps);
    },
    async close() {
      await box.core.close();
      await Deno.remove(home, { recursive: true });
    },
  };
  return box;
}

/** Runs `work` on a core started with `options` (startBox), closed afterwards whatever happens. */
export async function withBox(
  options: BoxOptions,
  work: (box: TestBox) => Promise<void>,
): Promise<void> {
  const box = await startBox(options);
  try {
    await work(box);
  } finally {
    await box.close();
  }
}

/** Waits (up to `ms`) until the task has a pending approval; returns its id. */
export async function pendingApproval(box: TestBox, task: TestTask, ms = 5000): Promise<number> {
  let id = -1;
  await until(async () => {
    const items = (await box.admin("GET", "/approvals")).body.items as {
      approval: number;
      task: string;
    }[];
    id = items.find((item) => item.task === task.id)?.approval ?? -1;
    return id !== -1;
  }, ms);
  return id;
}

/**
 * Follows task `id`'s journal over the admin socket `socket` until the task has ended, and returns
 * the last page; fails after `ms` rather than hang.
 */
export async function taskEnded(socket: string, id: string, ms: number): Promise<Json> {
  const deadline = Date.now() + ms;
  let after = 0;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`task ${id} did not end in ${ms} ms`);
    const page = (await requestJson(socket, {
      method: "GET",
      path: `/tasks/${id}/journal?after=${after}&wait=${left}`,
    })).body as Json;
    after = page.next;
    if (page.ended) return page;
  }
}

/** Every audit record under `home`, parsed, in order. */
export async function auditRecords(home: string): Promise<Json[]> {
  const out: Json[] = [];
  const files = [...Deno.readDirSync(`${home}/audit`)].map((e) => e.name)
    .filter((n) => n.endsWith(".jsonl")).sort();
  for (const file of files) {
    for (const line of (await Deno.readTextFile(`${home}/audit/${file}`)).split("\n")) {
      if (line !== "") out.push(JSON.parse(line));
    }
  }
  return out;
}

/**
 * A test app tool, `test.count`, that counts its runs: the runs it saw, the tool, and the box
 * options that put it on a core behind a grant of `mode` (auto unless given).
 */
export function counter(
  mode: "auto" | "ask" = "auto",
): { runs: unknown[]; tool: AppTool<never>; options: BoxOptions } {
  const runs: unknown[] = [];
  const tool = defineTool({
    name: "test.count",
    description: "Counts its runs.",
    input: z.strictObject({ n: z.number() }),
    secrets: [],
    run: (_ctx, input) => {
      runs.push(input);
      return Promise.resolve({ runs: runs.length });
    },
  }) as AppTool<never>;
  return {
    runs,
    tool,
    options: { grants: { count: grant({ tool: "test.count", mode }) }, tools: [tool] },
  };
}

/** What `heldTool` gives: the inputs' `n` as each run started, the gate that ends them, the tool. */
export interface HeldTool {
  started: number[];
  gate: PromiseWithResolvers<void>;
  release: () => void;
  tool: AppTool<never>;
}

/** A test app tool `name` that costs `cents` and runs until the test releases it: a slow paid call. */
export function heldTool(name: string, cents = 6): HeldTool {
  const started: number[] = [];
  const gate = Promise.withResolvers<void>();
  const tool = defineTool({
    name,
    description: `Costs ${cents} cents and runs until the test releases it.`,
    input: z.strictObject({ n: z.number() }),
    cost: () => cents,
    secrets: [],
    run: async (_ctx, input) => {
      started.push(input.n);
      await gate.promise;
      return { n: input.n };
    },
  });
  return { started, gate, release: () => gate.resolve(), tool: tool as AppTool<never> };
}

/**
 * Starts a task whose worker runs `command` (kind cmd) with example.echo, and `hosts` on its egress
 * list: its record, failed or not.
 */
export async function startCmdTask(
  box: TestBox,
  command: string[],
  options: { hosts?: string[] } = {},
): Promise<Json> {
  const answer = await box.admin("POST", "/tasks", {
    worker: { kind: "cmd", command },
    tools: ["example.echo"],
    budgetCents: null,
    hosts: options.hosts ?? [],
  });
  assertEquals(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.task;
}

/** Starts a `cmd` task running the sh `script`, `hosts` on its egress list: its id and home. */
export async function startScriptTask(
  box: TestBox,
  script: string,
  options: { hosts?: string[] } = {},
): Promise<{ id: string; home: string }> {
  const task = await startCmdTask(box, ["/bin/sh", "-c", script], options);
  return { id: task.id, home: `${box.home}/tasks/${task.id}/home` };
}

/** Waits for a task to end (done, failed or stopped): its record and its worker's log. */
export async function taskEnd(
  box: TestBox,
  id: string,
  ms = 90_000,
): Promise<{ task: Json; log: string }> {
  let task: Json = null;
  await until(async () => {
    task = (await box.admin("GET", `/tasks/${id}`)).body.task;
    return task.state !== "running" && task.state !== "waiting";
  }, ms);
  const log = await Deno.readTextFile(`${box.home}/tasks/${id}/worker.log`).catch(() => "");
  return { task, log };
}

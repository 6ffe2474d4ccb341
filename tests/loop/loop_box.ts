/**
 * A real core in-process on a temporary home whose tasks run the real `gurt loop` worker, with a
 * vault view set by the test and a core that can be restarted on the same home.
 */
import { adminSocketPath } from "../../mod/config/mod.ts";
import { loadConfig } from "../../mod/config/mod.ts";
import { Core } from "../../mod/core/core.ts";
import { requestJson } from "../../mod/net/mod.ts";
import { type AppTool, exampleApp, ToolRegistry } from "../../mod/tools/mod.ts";
import { auditRecords, type Json } from "../core/harness.ts";

/** A box whose tasks run `gurt loop`. */
export interface LoopBox {
  home: string;
  core(): Core;
  logs: string[];
  admin(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Json }>;
  /** Starts a loop task and returns its id (or the failed task's record, when it failed). */
  startLoop(prompt: string, tools: string[], model?: string): Promise<Json>;
  /** Waits until task `id` has ended, and returns its record. */
  ended(id: string, ms?: number): Promise<Json>;
  /** Closes the core (stopping the workers) and starts a new one on the same home. */
  restart(): Promise<void>;
  records(): Promise<Json[]>;
  close(): Promise<void>;
}

/** Starts a box with `[models]` pointing at `modelUrl`. */
export async function startLoopBox(options: {
  modelUrl: string;
  kind: "anthropic" | "openai";
  key?: string;
  vault?: Record<string, string>;
  grants?: Record<string, string>;
  tools?: AppTool<never>[];
  env?: Record<string, string>;
}): Promise<LoopBox> {
  const home = await Deno.makeTempDir({ prefix: "gurt-loop-" });
  await Deno.mkdir(`${home}/grants`);
  for (const [id, toml] of Object.entries(options.grants ?? {})) {
    await Deno.writeTextFile(`${home}/grants/${id}.toml`, toml);
  }
  const key = options.key ?? "ANTHROPIC_API_KEY";
  await Deno.writeTextFile(
    `${home}/gurt.toml`,
    `[models]\nkind = "${options.kind}"\nbase_url = "${options.modelUrl}"\nkey = "${key}"\n`,
  );
  const config = loadConfig({
    home,
    env: { BOX_VAULT: `${home}/vault.env`, ...options.env },
    root: false,
  });
  const vault = options.vault ?? {};
  const logs: string[] = [];
  const start = () =>
    Core.start(config, {
      log: (line) => logs.push(line),
      registry: new ToolRegistry([...exampleApp, ...(options.tools ?? [])]),
      asRoot: false,
      vault: { value: (name) => vault[name], names: () => Object.keys(vault) },
    });
  let core = await start();
  const socket = adminSocketPath(home);
  const admin = (method: string, path: string, body?: unknown) =>
    requestJson(socket, { method, path, body }) as Promise<Json>;
  return {
    home,
    core: () => core,
    logs,
    admin,
    async startLoop(prompt, tools, model) {
      const answer = await admin("POST", "/tasks", {
        prompt,
        worker: { kind: "loop", model: model ?? null },
        tools,
      });
      if (answer.status !== 200) {
        throw new Error(`task start failed: ${JSON.stringify(answer.body)}`);
      }
      return answer.body.task;
    },
    async ended(id, ms = 30_000) {
      const deadline = Date.now() + ms;
      let after = 0;
      for (;;) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`task ${id} did not end in time; logs: ${logs.join("\n")}`);
        const page = await admin("GET", `/tasks/${id}/journal?after=${after}&wait=${left}`);
        after = page.body.next;
        if (page.body.ended) return (await admin("GET", `/tasks/${id}`)).body.task;
      }
    },
    async restart() {
      await core.close();
      core = await start();
    },
    records: () => auditRecords(home),
    async close() {
      await core.close();
      await Deno.remove(home, { recursive: true });
    },
  };
}

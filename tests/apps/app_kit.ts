/**
 * A box with apps, for the apps' tests: a real `gurt serve` on a fresh home with its own vault,
 * the owner's /apps and /api/vault routes, app folders written as an owner writes them, and the
 * MCP servers install.sh --test puts in /usr/local/lib/gurt-test-apps.
 */
import { adminSocketPath } from "../../mod/config/mod.ts";
import { readAppFolder } from "../../mod/apps/mod.ts";
import {
  grant,
  type GrantSpec,
  type Json,
  rawJson,
  type ServeProcess,
  startServe,
  startTask,
  stopAllTasks,
  taskRequest,
} from "../kit/mod.ts";

/** Where install.sh --test installs the test MCP servers (tests/apps use these versions). */
export const TEST_APPS = "/usr/local/lib/gurt-test-apps/node_modules/@modelcontextprotocol";
export const EVERYTHING = `${TEST_APPS}/server-everything/dist/index.js`;
export const MEMORY = `${TEST_APPS}/server-memory/dist/index.js`;
export const POSTGRES = `${TEST_APPS}/server-postgres/dist/index.js`;

/** Whether the test servers are installed (install.sh --test, as root). */
/**
 * The app.toml of server-everything over stdio: with the key EVERYTHING_TOKEN in its environment
 * where `token`, and `extra` lines after (a [tools.x] table, say).
 */
export function everythingManifest(options: { token?: boolean; extra?: string[] } = {}): string {
  return [
    'kind = "mcp"',
    `command = ["node", ${JSON.stringify(EVERYTHING)}, "stdio"]`,
    ...(options.token ? ["[secrets.EVERYTHING_TOKEN]", 'env = "EVERYTHING_TOKEN"'] : []),
    ...(options.extra ?? []),
    "",
  ].join("\n");
}

export const haveTestApps = await Deno.stat(EVERYTHING).then(() => true, () => false);

/** A running box for app tests. */
export interface AppBox {
  home: string;
  serve: ServeProcess;
  /** An owner request on the admin socket. */
  admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  /** Writes an app's source folder (app.toml and files) and returns its path. */
  source(name: string, manifest: string, files?: Record<string, string>): Promise<string>;
  /** Adds the app in `folder` as `name`, as `gurt app add` sends it. */
  add(folder: string, name: string): Promise<{ status: number; body: Json }>;
  /** Sets a vault key through the owner's route. */
  setKey(name: string, value: string): Promise<void>;
  /** Writes a grant file. */
  grant(spec: GrantSpec): Promise<void>;
  /** Starts a task with these tools; its id. */
  task(tools: string[]): Promise<string>;
  /** A call of a task's tool through its broker socket. */
  call(
    task: string,
    tool: string,
    input: unknown,
    key?: string,
  ): Promise<{ status: number; body: Json }>;
  /** Stops serve (SIGTERM, or SIGKILL with `kill`) and starts it again on the same home. */
  restart(options?: { kill?: boolean }): Promise<void>;
  close(): Promise<void>;
}

let keys = 0;

/** Lines added to gurt.toml's [tasks] and [apps] tables, which startAppBox writes itself. */
export interface AppBoxTables {
  tasks?: string;
  apps?: string;
}

/** Starts `gurt serve` on a fresh home with `toml` as its gurt.toml. */
export async function startAppBox(toml = "", tables: AppBoxTables = {}): Promise<AppBox> {
  const home = await Deno.makeTempDir({ prefix: "gurt-apps-" });
  const sources = await Deno.makeTempDir({ prefix: "gurt-app-sources-" });
  await Deno.writeTextFile(
    `${home}/gurt.toml`,
    `[tasks]
home_bytes = 67108864
${tables.tasks ?? ""}
[portal]
listen = "127.0.0.1:0"
[apps]
home_bytes = 67108864
${tables.apps ?? "call_timeout_ms = 15000"}
${toml}`,
  );
  await Deno.mkdir(`${home}/grants`, { recursive: true });
  const env = { BOX_VAULT: `${home}/vault.env` };
  let serve = await startServe(home, { env });
  if (serve.exited !== null) throw new Error(serve.stderr());
  const admin = (method: string, path: string, body?: unknown) =>
    rawJson(adminSocketPath(home), { method, path, body });
  const box: AppBox = {
    home,
    get serve() {
      return serve;
    },
    admin,
    async source(name, manifest, files = {}) {
      const dir = `${sources}/${name}`;
      await Deno.mkdir(dir, { recursive: true });
      await Deno.writeTextFile(`${dir}/app.toml`, manifest);
      for (const [file, text] of Object.entries(files)) {
        await Deno.writeTextFile(`${dir}/${file}`, text, { mode: 0o755 });
      }
      return dir;
    },
    add: async (folder, name) =>
      admin("POST", "/apps", { name, files: await readAppFolder(folder) }),
    async setKey(name, value) {
      const answer = await admin("PUT", `/api/vault/${name}`, { value });
      if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
    },
    async grant(spec) {
      await Deno.writeTextFile(`${home}/grants/g${keys++}.toml`, grant(spec));
    },
    task: (tools) => startTask(serve, { tools }),
    call: (task, tool, input, key) =>
      taskRequest(home, task, {
        method: "POST",
        path: "/call",
        body: { tool, input, key: key ?? `k${keys++}` },
      }),
    async restart(options = {}) {
      if (options.kill === true) await serve.kill9();
      else await serve.stop();
      serve = await startServe(home, { env });
      if (serve.exited !== null) throw new Error(serve.stderr());
    },
    async close() {
      if (serve.exited === null) {
        await stopAllTasks(serve).catch(() => {});
        // An app's user outlives the home unless its app is removed.
        const listed = await admin("GET", "/apps").catch(() => null);
        for (const app of (listed?.body?.apps ?? []) as { name: string }[]) {
          await admin("DELETE", `/apps/${app.name}`).catch(() => {});
        }
        await serve.stop();
      }
      await Deno.remove(home, { recursive: true }).catch(() => {});
      await Deno.remove(sources, { recursive: true }).catch(() => {});
    },
  };
  return box;
}

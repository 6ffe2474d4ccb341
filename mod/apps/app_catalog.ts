/**
 * The installed apps while the core runs: each folder of BOX_HOME/apps with its manifest, its
 * runner, and the tools its server listed last (kept in apps/<name>/tools.json, so that a task can
 * be given an app's tools, and a grant can name them, before the app has started in this run).
 * The catalog is the registry's ToolSource: `tools()` is the same map until an app's tools change.
 */
import type { AppTool, ToolContext, ToolSource } from "../tools/mod.ts";
import { writeFileAtomic } from "../common/mod.ts";
import {
  inputProblem,
  type LeftOutTool,
  type ListedTool,
  type OfferedTool,
  offeredTools,
} from "./app_tools.ts";
import { AppCallError, type AppConnection, AppRunner, type RunnerState } from "./app_runner.ts";
import type { AppManifest } from "./manifest.ts";

/** One installed app, as the catalog holds it. */
export interface InstalledApp {
  name: string;
  /** apps/<name>: the manifest, the home, the log. */
  folder: string;
  manifest: AppManifest;
  /** This install's own id (apps/<name>/instance): its user and cgroup are named by it. */
  instance: string;
  /** Whether the owner turned the app off (gurt app disable), beside its manifest's `enabled`. */
  ownerDisabled: boolean;
  tools: OfferedTool[];
  leftOut: LeftOutTool[];
}

/** Whether an app's tools are offered: on in its manifest, and not turned off by the owner. */
export function isEnabled(app: InstalledApp): boolean {
  return app.manifest.enabled && !app.ownerDisabled;
}

/** What the catalog needs from the core. */
export interface CatalogDeps {
  /** Starts an app's server (in its sandbox) and connects to it. */
  connect(app: InstalledApp): Promise<AppConnection>;
  /**
   * Why the app may not be given its vault key `name` now (the owner turned it off for the app,
   * or the vault does not hold it), in a sentence; null when it may.
   */
  keyProblem(app: string, declared: readonly string[], name: string): string | null;
  /**
   * What the app's server would be given of the vault now, as one value that changes when any of
   * its keys does (set anew, removed, turned off): a server started with other keys is stopped
   * before the next call, so that it never holds a key it may no longer have.
   */
  keysNow(app: InstalledApp): string;
  log(line: string): void;
  idleMs: number;
  callTimeoutMs: number;
  /** The largest result a call returns, as JSON ([runtime] max_output_bytes). */
  maxResultBytes: number;
}

interface Entry {
  app: InstalledApp;
  runner: AppRunner;
  /** keysNow as it was when the running server was started; null when none runs. */
  keys: string | null;
}

/** The file an app's last tool list is kept in. */
export const TOOLS_FILE = "tools.json";

/** The apps of a box. */
export class AppCatalog implements ToolSource {
  readonly #deps: CatalogDeps;
  readonly #apps = new Map<string, Entry>();
  #tools: ReadonlyMap<string, AppTool<never>> = new Map();
  #names: ReadonlySet<string> = new Set();

  constructor(deps: CatalogDeps) {
    this.#deps = deps;
  }

  tools(): ReadonlyMap<string, AppTool<never>> {
    return this.#tools;
  }

  /** Every installed app's tool names, the turned-off apps' too: what a grant may name. */
  names(): ReadonlySet<string> {
    return this.#names;
  }

  /** Why the tool `name` is not offered now, in a sentence for the task that called it. */
  whyNotOffered(name: string): string {
    const app = name.slice(0, name.indexOf("."));
    const pointer = "see runbook.md#app-tool-not-offered";
    const entry = this.#apps.get(app);
    if (entry === undefined) {
      return `${name} is not offered: no app ${app} is installed; ${pointer}`;
    }
    if (entry.app.ownerDisabled) {
      return `${name} is not offered: its app ${app} is turned off (gurt app disable); ${pointer}`;
    }
    if (!entry.app.manifest.enabled) {
      return `${name} is not offered: its app ${app} is turned off (enabled = false in its app.toml); ${pointer}`;
    }
    return `${name} is not offered: the app ${app}'s server no longer lists it; ${pointer}`;
  }

  /** The apps, by name. */
  apps(): InstalledApp[] {
    return [...this.#apps.values()].map((entry) => entry.app).sort((a, b) =>
      a.name < b.name ? -1 : 1
    );
  }

  /** An app and its runner's state, if installed. */
  app(name: string): { app: InstalledApp; state: RunnerState } | undefined {
    const entry = this.#apps.get(name);
    return entry === undefined ? undefined : { app: entry.app, state: entry.runner.state() };
  }

  /**
   * Adds (or replaces) an app whose manifest has been read, with the tool list last kept for it
   * (none for a new app: `start` lists them). A replaced app's server is stopped first.
   */
  async put(
    name: string,
    manifest: AppManifest,
    options: { listed: ListedTool[] | null; ownerDisabled: boolean; instance: string },
  ): Promise<InstalledApp> {
    await this.remove(name);
    const { tools, leftOut } = offeredTools(name, options.listed ?? [], manifest.tools);
    const app: InstalledApp = {
      name,
      folder: manifest.folder,
      manifest,
      instance: options.instance,
      ownerDisabled: options.ownerDisabled,
      tools,
      leftOut,
    };
    const entry: Entry = { app, runner: null as unknown as AppRunner, keys: null };
    entry.runner = new AppRunner({
      app: name,
      connect: () => {
        entry.keys = this.#deps.keysNow(app);
        return this.#deps.connect(app);
      },
      onTools: (fresh) => this.#listed(app, fresh),
      log: this.#deps.log,
      idleMs: this.#deps.idleMs,
      callTimeoutMs: this.#deps.callTimeoutMs,
    });
    this.#apps.set(name, entry);
    this.#rebuild();
    return app;
  }

  /** Turns an app's tools off or on, as the owner asked. */
  setOwnerDisabled(name: string, disabled: boolean): void {
    const entry = this.#apps.get(name);
    if (entry === undefined) throw new Error(`no app ${name} is installed`);
    entry.app.ownerDisabled = disabled;
    this.#rebuild();
    if (disabled) entry.runner.stop().catch(() => {});
  }

  /** Starts an app's server now and lists its tools (throws an AppCallError when it cannot). */
  async start(name: string): Promise<InstalledApp> {
    const entry = this.#apps.get(name);
    if (entry === undefined) throw new Error(`no app ${name} is installed`);
    await entry.runner.start();
    return entry.app;
  }

  /** Stops an app's server and forgets the app. */
  async remove(name: string): Promise<void> {
    const entry = this.#apps.get(name);
    if (entry === undefined) return;
    this.#apps.delete(name);
    this.#rebuild();
    await entry.runner.stop();
  }

  /** Stops every app's server. */
  async close(): Promise<void> {
    await Promise.all([...this.#apps.values()].map((entry) => entry.runner.stop()));
  }

  async #listed(app: InstalledApp, listed: ListedTool[]): Promise<void> {
    const { tools, leftOut } = offeredTools(app.name, listed, app.manifest.tools);
    app.tools = tools;
    app.leftOut = leftOut;
    await writeFileAtomic(`${app.folder}/${TOOLS_FILE}`, JSON.stringify(listed) + "\n", {
      mode: 0o600,
    });
    for (const left of leftOut) {
      this.#deps.log(
        `gurt: app ${app.name}: tool ${JSON.stringify(left.serverName)} left out: ${left.problem}`,
      );
    }
    this.#rebuild();
  }

  #rebuild(): void {
    const map = new Map<string, AppTool<never>>();
    const names = new Set<string>();
    for (const entry of this.#apps.values()) {
      for (const tool of entry.app.tools) names.add(tool.boxName);
      if (!isEnabled(entry.app)) continue;
      for (const tool of entry.app.tools) map.set(tool.boxName, this.#boxTool(entry, tool));
    }
    this.#tools = map;
    this.#names = names;
  }

  #boxTool(entry: Entry, tool: OfferedTool): AppTool<never> {
    const deps = this.#deps;
    const { app, runner } = entry;
    const boxTool: AppTool<unknown> = {
      name: tool.boxName,
      description: tool.description,
      readOnly: tool.readOnly,
      inputSchema: tool.inputSchema,
      ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
      input: {
        safeParse: (value: unknown) => {
          const problem = inputProblem(tool, value);
          return problem === null
            ? { success: true, data: value }
            : { success: false, error: { message: problem } };
        },
      },
      cost: () => tool.costCents,
      // The app's server holds its own keys; the broker's run reads none for it.
      secrets: [],
      run: async (ctx: ToolContext, input: unknown) => {
        // A server started with keys that have changed since (set anew, removed, turned off for
        // it) is stopped first, before a key it may no longer hold fails the call: never left
        // running with it.
        if (entry.keys !== null && entry.keys !== deps.keysNow(app)) {
          entry.keys = null;
          await runner.stop();
        }
        // A module app's tool names the keys it reads (its host says, in tools/list); any
        // other app's server holds all of its keys at once, so each of them is needed.
        const needs = app.manifest.kind === "module" ? tool.secrets : null;
        const off = secretProblem(app, deps.keyProblem, needs);
        if (off !== null) throw new AppCallError(off);
        const result = await runner.call(tool.serverName, input, ctx.key, ctx.signal);
        const size = JSON.stringify(result).length;
        if (size > deps.maxResultBytes) {
          throw new AppCallError(
            `the app ${app.name} answered ${size} bytes, more than [runtime] max_output_bytes (${deps.maxResultBytes}); see runbook.md#app-result-too-large`,
          );
        }
        return result;
      },
    };
    return boxTool as AppTool<never>;
  }
}

/**
 * Why a call of `app` cannot be made for want of one of its keys, or null. An app's server holds
 * all its keys at once, so a key it may not have stops every tool of it.
 */
export function secretProblem(
  app: InstalledApp,
  keyProblem: CatalogDeps["keyProblem"],
  needs: readonly string[] | null = null,
): string | null {
  const declared = [...app.manifest.secrets.keys()];
  for (const [name, secret] of app.manifest.secrets) {
    if (needs !== null && !needs.includes(name)) continue;
    if (!secret.enabled) {
      return `the manifest of the app ${app.name} turns its key ${name} off (enabled = false in ${app.manifest.file}), so its tools are not called; see runbook.md#app-key-off`;
    }
    const problem = keyProblem(app.name, declared, name);
    if (problem !== null) return problem;
  }
  return null;
}

/** The tool list last kept for an app, or null when there is none (or it cannot be read). */
export async function keptTools(folder: string): Promise<ListedTool[] | null> {
  try {
    const parsed = JSON.parse(await Deno.readTextFile(`${folder}/${TOOLS_FILE}`));
    return Array.isArray(parsed) ? parsed as ListedTool[] : null;
  } catch {
    return null;
  }
}

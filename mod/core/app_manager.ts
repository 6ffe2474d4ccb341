/**
 * The owner's apps, as the admin socket changes them: add (put in place, recorded, started once to
 * list its tools, and taken out again whole if that fails), remove, enable, disable, and what
 * `gurt app list`, `show` and `check` say. Each change is an audit record written before it takes
 * effect (app_added, app_removed, app_enabled, app_disabled: names and the manifest's hash, never
 * a value); a change whose record cannot be written does not happen.
 */
import {
  type AppCatalog,
  appDir,
  type AppFile,
  AppInstallError,
  appInstance,
  appsDir,
  type AppSource,
  DISABLED_FILE,
  type InstalledApp,
  isEnabled,
  keptTools,
  parseNpmSource,
  placeApp,
  readManifest,
  removeAppFolder,
} from "../apps/mod.ts";
import type { BrokerDeps } from "../broker/mod.ts";
import { HttpError } from "../common/mod.ts";
import { findAppUser, removeTaskUser } from "./task_users.ts";
import { unmountAppHome } from "./app_launch.ts";

/** One app as `gurt app list` shows it. */
export interface AppSummary {
  name: string;
  kind: string;
  enabled: boolean;
  state: string;
  tools: number;
  last_error: string | null;
}

/** One app as `gurt app show` shows it. */
export interface AppDetail extends AppSummary {
  description: string | null;
  folder: string;
  manifest_sha256: string;
  /** Why its tools are not offered, where they are not. */
  disabled_by: "owner" | "manifest" | null;
  start: string;
  hosts: string[];
  /** Its TCP forwards, `host:port` each, reached inside at 127.0.0.1:port. */
  ports: string[];
  secrets: { name: string; reaches: string; set: boolean; usable: string | null }[];
  tool_list: {
    name: string;
    server_name: string;
    description: string;
    read_only: boolean;
    cost_cents: number;
    input: unknown;
  }[];
  left_out: { server_name: string; problem: string }[];
  paused_until: string | null;
}

/** What the manager needs of the core. */
export interface AppManagerDeps {
  deps: Pick<BrokerDeps, "home" | "audit" | "log">;
  catalog: AppCatalog;
  asRoot: boolean;
  /** Whether the vault holds a key, and why the app may not have it (null: it may). */
  vaultHas(name: string): boolean;
  keyProblem(app: string, declared: readonly string[], name: string): string | null;
}

/** The owner's side of the apps. */
export class AppManager {
  constructor(readonly options: AppManagerDeps) {}

  list(): AppSummary[] {
    return this.options.catalog.apps().map((app) => this.#summary(app));
  }

  show(name: string): AppDetail {
    const found = this.options.catalog.app(name);
    if (found === undefined) throw notInstalled(name, this.options.catalog);
    const { app, state } = found;
    const manifest = app.manifest;
    const declared = [...manifest.secrets.keys()];
    return {
      ...this.#summary(app),
      description: manifest.description ?? null,
      folder: app.folder,
      manifest_sha256: manifest.hash,
      disabled_by: !manifest.enabled ? "manifest" : app.ownerDisabled ? "owner" : null,
      start: manifest.start,
      hosts: [...manifest.hosts],
      ports: manifest.ports.map((p) =>
        `${p.host.includes(":") ? `[${p.host}]` : p.host}:${p.port}`
      ),
      secrets: [...manifest.secrets].map(([secret, facts]) => ({
        name: secret,
        reaches: facts.delivery.kind === "env"
          ? `environment variable ${facts.delivery.name}`
          : facts.delivery.kind === "file"
          ? `file ${facts.delivery.name} in its home`
          : facts.delivery.kind === "arg"
          ? "argument"
          : manifest.kind === "mcp-http"
          ? "header"
          : "ctx.secret",
        set: this.options.vaultHas(secret),
        usable: !facts.enabled
          ? "turned off in app.toml"
          : this.options.keyProblem(app.name, declared, secret),
      })),
      tool_list: app.tools.map((tool) => ({
        name: tool.boxName,
        server_name: tool.serverName,
        description: tool.description,
        read_only: tool.readOnly,
        cost_cents: tool.costCents,
        input: tool.inputSchema,
      })),
      left_out: app.leftOut.map((left) => ({
        server_name: left.serverName,
        problem: left.problem,
      })),
      paused_until: state.pausedUntil === null ? null : new Date(state.pausedUntil).toISOString(),
    };
  }

  /** Installs an app from a folder or npm, lists its tools once, and offers them. */
  async add(body: { name: string; npm?: string; files?: AppFile[] }): Promise<AppDetail> {
    const { deps, catalog } = this.options;
    const name = body.name;
    const source: AppSource = body.npm !== undefined
      ? installing(() => parseNpmSource(body.npm!))
      : { kind: "files", files: body.files ?? [] };
    const manifest = await installingAsync(() =>
      placeApp(deps.home, name, source, { log: deps.log })
    );
    try {
      await deps.audit.append({
        type: "app_added",
        app: name,
        kind: manifest.kind,
        manifest_sha256: manifest.hash,
      });
    } catch (error) {
      await removeAppFolder(deps.home, name);
      throw error;
    }
    await catalog.put(name, manifest, {
      listed: null,
      ownerDisabled: false,
      instance: await appInstance(manifest.folder),
    });
    try {
      await catalog.start(name);
    } catch (error) {
      // Not offered, not kept: the record of its removal says so.
      await this.#takeOut(name, manifest.hash).catch(() => {});
      throw new HttpError(
        400,
        `the app ${name} was not added: ${(error as Error).message}`,
        "app_failed",
      );
    }
    return this.show(name);
  }

  /**
   * Reads an app's manifest again (the owner edited apps/<name>/app.toml): recorded as app_added
   * with the new hash, its server stopped and started again with it, its tools listed anew. A
   * manifest that does not read is refused and the app stays as it was.
   */
  async reload(name: string): Promise<AppDetail> {
    const { deps, catalog } = this.options;
    const found = catalog.app(name);
    if (found === undefined) throw notInstalled(name, catalog);
    const manifest = await readManifest(found.app.folder).catch((error) => {
      throw new HttpError(400, (error as Error).message, "app_invalid");
    });
    await deps.audit.append({
      type: "app_added",
      app: name,
      kind: manifest.kind,
      manifest_sha256: manifest.hash,
    });
    await catalog.put(name, manifest, {
      listed: found.app.tools.length === 0 ? null : await keptTools(found.app.folder),
      ownerDisabled: found.app.ownerDisabled,
      instance: found.app.instance,
    });
    if (isEnabled(catalog.app(name)!.app)) {
      await catalog.start(name).catch((error) => {
        throw new HttpError(400, `the app ${name} did not start: ${error.message}`, "app_failed");
      });
    }
    return this.show(name);
  }

  /** Removes an app: its tools are no longer offered, its server stops, its folder and user go. */
  async remove(name: string): Promise<void> {
    const found = this.options.catalog.app(name);
    if (found === undefined) throw notInstalled(name, this.options.catalog);
    await this.#takeOut(name, found.app.manifest.hash);
  }

  /** Turns an app's tools off or on. */
  async setEnabled(name: string, enabled: boolean): Promise<AppDetail> {
    const { deps, catalog } = this.options;
    const found = catalog.app(name);
    if (found === undefined) throw notInstalled(name, catalog);
    await deps.audit.append({ type: enabled ? "app_enabled" : "app_disabled", app: name });
    const mark = `${found.app.folder}/${DISABLED_FILE}`;
    if (enabled) await Deno.remove(mark).catch(() => {});
    else await Deno.writeTextFile(mark, "turned off by gurt app disable\n", { mode: 0o644 });
    catalog.setOwnerDisabled(name, !enabled);
    return this.show(name);
  }

  /** Every app folder's manifest read again: the problems, by app (none: []). */
  async check(): Promise<{ app: string; problem: string }[]> {
    const problems: { app: string; problem: string }[] = [];
    const folders: string[] = [];
    try {
      for await (const entry of Deno.readDir(appsDir(this.options.deps.home))) {
        if (entry.isDirectory && !entry.name.startsWith(".")) folders.push(entry.name);
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    for (const name of folders.sort()) {
      try {
        await readManifest(appDir(this.options.deps.home, name));
      } catch (error) {
        problems.push({ app: name, problem: (error as Error).message });
        continue;
      }
      const found = this.options.catalog.app(name);
      for (const left of found?.app.leftOut ?? []) {
        problems.push({
          app: name,
          problem: `tool ${JSON.stringify(left.serverName)}: ${left.problem}`,
        });
      }
    }
    return problems;
  }

  async #takeOut(name: string, hash: string): Promise<void> {
    const { deps, catalog, asRoot } = this.options;
    await deps.audit.append({ type: "app_removed", app: name, manifest_sha256: hash });
    const instance = catalog.app(name)?.app.instance;
    await catalog.remove(name);
    if (asRoot && instance !== undefined) {
      const user = await findAppUser(instance);
      if (user !== undefined) {
        const problem = await removeTaskUser(user);
        if (problem !== null) deps.log(`gurt: app ${name}: ${problem}`);
      }
    }
    if (asRoot) await unmountAppHome(appDir(deps.home, name), deps.log);
    await removeAppFolder(deps.home, name);
  }

  #summary(app: InstalledApp): AppSummary {
    const state = this.options.catalog.app(app.name)?.state;
    return {
      name: app.name,
      kind: app.manifest.kind,
      enabled: isEnabled(app),
      state: state?.state ?? "stopped",
      tools: app.tools.length,
      last_error: state?.lastError ?? null,
    };
  }
}

function notInstalled(name: string, catalog: AppCatalog): HttpError {
  const names = catalog.apps().map((app) => app.name);
  return new HttpError(
    404,
    `no app ${JSON.stringify(name)} is installed; the apps are ${names.join(", ") || "none"}`,
    "no_such_app",
  );
}

function installing<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof AppInstallError) throw new HttpError(400, error.message, "app_invalid");
    throw error;
  }
}

async function installingAsync<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof AppInstallError) throw new HttpError(400, error.message, "app_invalid");
    throw error;
  }
}

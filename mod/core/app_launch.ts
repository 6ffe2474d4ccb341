/**
 * How the core starts an app's server and connects to it (mod/apps's AppCatalog asks).
 *
 * A stdio app (`mcp`, and `module` through `gurt app-host`) runs in an app sandbox, the task
 * sandbox with the app's own limits ([apps] in gurt.toml): as root its own user `box-app-<name>`
 * (a uid never given before, mod/core/task_users.ts), its home apps/<name>/home the one folder it
 * may write, its folder read-only (its code), only `lo`, and, when its manifest lists hosts, its
 * own egress proxy with those hosts as its one way out; each refusal there is an app_blocked
 * record naming it. It sees no box home, no vault, no task. Its process holds exactly its declared
 * keys the owner has not turned off, as its manifest says each reaches it: an environment
 * variable, a file in its home (0400), or an argument, set inside the sandbox by sh from an
 * environment variable so that the value is in no argv outside the app's own pid namespace. Its
 * stdout is MCP; its stderr goes to apps/<name>/app.log, capped and with vault values redacted.
 *
 * An `mcp-http` app is a server elsewhere: the core connects to its url with the SDK's Streamable
 * HTTP client, its headers filled from the vault; nothing is started.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { AppConnection, AppProcess, InstalledApp } from "../apps/mod.ts";
import { ProcessTransport } from "../apps/mod.ts";
import type { BrokerDeps } from "../broker/mod.ts";
import type { EgressServer } from "../egress/mod.ts";
import { EGRESS_PORT, proxyEnv, type TaskSandboxes } from "../sandbox/mod.ts";
import { ensureAppUser, type TaskUser } from "./task_users.ts";
import { openTaskEgress } from "./task_egress.ts";
import { gurtInvocation } from "./self_command.ts";
import { WorkerLog } from "./worker_log.ts";
import { stopWorker } from "./worker_process.ts";

/** Reads a vault key for an app: its value, or throws a sentence (turned off, not set, undeclared). */
export type AppSecretReader = (app: string, declared: readonly string[], name: string) => string;

/** What the launcher needs from the core. */
export interface AppLaunchOptions {
  deps: BrokerDeps;
  /** The task sandbox, made with [apps]'s limits. */
  sandboxes: TaskSandboxes;
  asRoot: boolean;
  readSecret: AppSecretReader;
}

/** The prefix of the environment variable a module app's host reads a key from. */
export const MODULE_SECRET_PREFIX = "GURT_APP_SECRET_";

/** The newest server started in each app's group, by the group's name. */
const newestRun = new Map<string, object>();

/** How long a stopping app's server has after SIGTERM before it is killed. */
const STOP_GRACE_MS = 2000;

/** Makes the connect function of an AppCatalog. */
export function appConnector(
  options: AppLaunchOptions,
): (app: InstalledApp) => Promise<AppConnection> {
  return (app) =>
    app.manifest.kind === "mcp-http"
      ? Promise.resolve(httpConnection(app, options))
      : stdioConnection(app, options);
}

function declaredOf(app: InstalledApp): string[] {
  return [...app.manifest.secrets.keys()];
}

function httpConnection(app: InstalledApp, options: AppLaunchOptions): AppConnection {
  const manifest = app.manifest;
  if (manifest.kind !== "mcp-http") throw new Error("not an mcp-http app");
  const headers: Record<string, string> = {};
  for (const header of manifest.headers) {
    headers[header.name] = "secret" in header
      ? header.format.replace("{}", options.readSecret(app.name, declaredOf(app), header.secret))
      : header.value;
  }
  const transport = new StreamableHTTPClientTransport(new URL(manifest.url), {
    requestInit: { headers },
  });
  return { transport };
}

async function stdioConnection(
  app: InstalledApp,
  options: AppLaunchOptions,
): Promise<AppConnection> {
  const { deps } = options;
  const manifest = app.manifest;
  if (manifest.kind === "mcp-http") throw new Error("an mcp-http app has no process");
  const user = options.asRoot ? await ensureAppUser(app.name, deps.home) : null;
  const home = `${app.folder}/home`;
  await prepareHome(home, user);
  const env: Record<string, string> = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    LANG: "C.UTF-8",
    GURT_APP_NAME: app.name,
  };
  const argSecrets = new Map<string, string>();
  const declared = declaredOf(app);
  for (const [name, secret] of manifest.secrets) {
    if (!secret.enabled) continue;
    const value = options.readSecret(app.name, declared, name);
    const delivery = secret.delivery;
    if (manifest.kind === "module") env[`${MODULE_SECRET_PREFIX}${name}`] = value;
    else if (delivery.kind === "env") env[delivery.name] = value;
    else if (delivery.kind === "file") {
      await writeSecretFile(`${home}/${delivery.name}`, value, user);
    } else if (delivery.kind === "arg") argSecrets.set(name, value);
  }
  let egress: EgressServer | null = null;
  const egressSocket = `${app.folder}/egress.sock`;
  if (manifest.hosts.length > 0) {
    await Deno.remove(egressSocket).catch(() => {});
    egress = await openAppEgress(app, egressSocket, deps);
    await Deno.chmod(egressSocket, 0o600);
    if (user !== null) await Deno.chown(egressSocket, user.uid, user.gid);
    Object.assign(env, proxyEnv());
  }
  let argv: string[];
  if (manifest.kind === "module") {
    const host = gurtInvocation(["app-host", manifest.module]);
    argv = [host.program, ...host.args];
    env.GURT_APP_HOME = home;
    env.GURT_APP_HOSTS = manifest.hosts.join(",");
  } else {
    argv = argSecrets.size === 0
      ? [...manifest.command]
      : withArgSecrets(manifest.command, argSecrets, env);
  }
  const log = await WorkerLog.open(`${app.folder}/app.log`, deps.config.tasks.worker_log_bytes);
  const group = `app-${app.name}`;
  // A server started while the last one was still stopping shares its group: the last one's end
  // must not kill it (disable then enable at once, an idle stop then a call).
  const run = {};
  newestRun.set(group, run);
  let child: Deno.ChildProcess;
  try {
    child = await options.sandboxes.spawn({
      task: group,
      hostname: `gurt-app-${app.name}`,
      home,
      doors: egress === null ? [] : [{ port: EGRESS_PORT, socket: egressSocket }],
      readOnly: [app.folder],
      argv,
      env,
      user,
      stdio: "program",
    });
  } catch (error) {
    await log.close().catch(() => {});
    await egress?.close().catch(() => {});
    throw error;
  }
  let lastWords = "";
  const stderrDone = copyRedacted(child.stderr, log, deps.redact, (line) => (lastWords = line));
  const status = child.status.then(async (status) => {
    await stderrDone;
    await log.close().catch(() => {});
    await egress?.close().catch(() => {});
    if (newestRun.get(group) === run) {
      newestRun.delete(group);
      await options.sandboxes.end(group);
    }
    return { code: status.code, signal: status.signal };
  });
  const process: AppProcess = {
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: new ReadableStream(),
    status,
    kill: async () => {
      await stopWorker(child.pid, STOP_GRACE_MS);
      await status.catch(() => {});
    },
  };
  let ended: string | null = null;
  status.then((s) => {
    ended = `it exited with ${s.signal === null ? `status ${s.code}` : `signal ${s.signal}`}` +
      (lastWords === "" ? "" : `; its last line on stderr: ${lastWords}`);
  });
  return { transport: new ProcessTransport(process), ended: () => ended };
}

/** The app's home: made once, its user's alone (as root), the one folder the app may write. */
async function prepareHome(home: string, user: TaskUser | null): Promise<void> {
  await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  const found = await Deno.lstat(home);
  if (!found.isDirectory) throw new Error(`${home} is not a folder`);
  if (user !== null) await Deno.chown(home, user.uid, user.gid);
  await Deno.chmod(home, 0o700);
}

async function writeSecretFile(path: string, value: string, user: TaskUser | null): Promise<void> {
  await Deno.remove(path).catch(() => {});
  const file = await Deno.open(path, { write: true, createNew: true, mode: 0o400 });
  try {
    await file.write(new TextEncoder().encode(value));
  } finally {
    file.close();
  }
  // Made new (never through a link), in the home only root and the app's user may enter.
  if (user !== null) await Deno.chown(path, user.uid, user.gid);
}

/**
 * The argv of a server with keys among its arguments: sh puts each `{NAME}` element in place from
 * an environment variable it then unsets, so the values are only in the server's own argv.
 */
function withArgSecrets(
  command: readonly string[],
  secrets: ReadonlyMap<string, string>,
  env: Record<string, string>,
): string[] {
  const cases: string[] = [];
  const unset: string[] = [];
  for (const [name, value] of secrets) {
    const variable = `GURT_ARG_${name}`;
    env[variable] = value;
    cases.push(`"{${name}}") set -- "$@" "$${variable}" ;;`);
    unset.push(variable);
  }
  const script = `n=$#; while [ "$n" -gt 0 ]; do a=$1; shift; n=$((n - 1)); case $a in ${
    cases.join(" ")
  } *) set -- "$@" "$a" ;; esac; done; unset ${unset.join(" ")}; exec "$@"`;
  return ["/bin/sh", "-c", script, "gurt-app", ...command];
}

function openAppEgress(
  app: InstalledApp,
  socketPath: string,
  deps: BrokerDeps,
): Promise<EgressServer> {
  return openTaskEgress({
    task: `app ${app.name}`,
    socketPath,
    config: deps.config,
    hosts: () => app.manifest.hosts,
    blocked: async (place) => {
      await deps.audit.append({ type: "app_blocked", app: app.name, ...place }).catch((error) =>
        deps.log(`gurt: app ${app.name}: app_blocked not audited: ${error.message}`)
      );
    },
    log: deps.log,
    clock: deps.clock,
    // An app's server has no owner at hand to ask: a host off its list is refused.
    ask: () => Promise.resolve(false),
  });
}

/** Copies an app's stderr into its log line by line, each line with the vault's values redacted. */
async function copyRedacted(
  stream: ReadableStream<Uint8Array>,
  log: WorkerLog,
  redact: (text: string) => string,
  last: (line: string) => void,
): Promise<void> {
  const encoder = new TextEncoder();
  let pending = "";
  const flush = async (text: string) => {
    const clean = redact(text);
    const lines = clean.split("\n").filter((line) => line.trim() !== "");
    if (lines.length > 0) last(lines[lines.length - 1].slice(0, 300));
    await log.write(encoder.encode(clean)).catch(() => {});
  };
  try {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      pending += text;
      const end = pending.lastIndexOf("\n");
      // A line is redacted whole, so a value is not cut in two; a line without end, at 64 KiB.
      if (end === -1 && pending.length < 65536) continue;
      const cut = end === -1 ? pending.length : end + 1;
      await flush(pending.slice(0, cut));
      pending = pending.slice(cut);
    }
  } catch {
    // The stream broke: nothing more to read.
  }
  if (pending !== "") await flush(pending);
}

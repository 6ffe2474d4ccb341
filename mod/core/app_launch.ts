/**
 * How the core starts an app's server and connects to it (mod/apps's AppCatalog asks).
 *
 * A stdio app (`mcp`, and `module` through `gurt app-host`) runs in an app sandbox, the task
 * sandbox with the app's own limits ([apps] in gurt.toml): as root its own user
 * `box-app-<instance>` (a uid never given before, mod/core/task_users.ts), its home
 * apps/<name>/home the one folder it may write (as root an ext4 image of [apps] home_bytes,
 * apps/<name>/home.img, mounted there while its server runs, as a task's home is), its own files
 * read-only (its code), only `lo`, and,
 * when its manifest lists hosts, its own egress proxy with those hosts as its one way out, and for
 * each of its `ports` a TCP forward (127.0.0.1:port inside relayed to host:port, for clients that
 * use no proxy, such as a database driver; a loopback or private address only for a host in
 * [egress] allow_private_hosts); each refusal of either is an app_blocked record naming it. Its
 * [env] is set with {HOME} replaced. It sees no box home, no vault, no task. Its process holds
 * exactly its declared keys the owner has not turned off, as its manifest says each reaches it: an
 * environment variable, a file in its home (0400), or an argument, set inside the sandbox by sh
 * from an environment variable so that the value is in no argv outside the app's own pid
 * namespace. Its stdout is MCP; its stderr goes to apps/<name>/app.log, capped and with vault
 * values redacted.
 *
 * An `mcp-http` app is a server elsewhere: the core connects to its url with the SDK's Streamable
 * HTTP client, its headers filled from the vault; nothing is started.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { AppConnection, AppPort, AppProcess, InstalledApp } from "../apps/mod.ts";
import { BOX_FILES, HOME_PLACEHOLDER, ProcessTransport, SECRET_ENV_PREFIX } from "../apps/mod.ts";
import type { BrokerDeps } from "../broker/mod.ts";
import { type EgressServer, serveForward } from "../egress/mod.ts";
import {
  type Door,
  EGRESS_PORT,
  mountPoints,
  mountTaskHome,
  proxyEnv,
  type TaskSandboxes,
} from "../sandbox/mod.ts";
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

/** The most bytes one answer of a remote app's server may hold, its event stream included. */
const MAX_HTTP_ANSWER_BYTES = 64 * 1024 * 1024;

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
    if (!("secret" in header)) {
      headers[header.name] = header.value;
      continue;
    }
    const value = keyFor(app, header.secret, options);
    if (value !== null) headers[header.name] = header.format.replace("{}", value);
  }
  const transport = new StreamableHTTPClientTransport(new URL(manifest.url), {
    requestInit: { headers },
    fetch: cappedFetch(MAX_HTTP_ANSWER_BYTES),
  });
  return { transport };
}

/** Each app's last server, by folder: a new one starts only once the last has ended. */
const lastRuns = new Map<string, Promise<unknown>>();

async function stdioConnection(
  app: InstalledApp,
  options: AppLaunchOptions,
): Promise<AppConnection> {
  const { deps } = options;
  if (app.manifest.kind === "mcp-http") throw new Error("an mcp-http app has no process");
  await lastRuns.get(app.folder)?.catch(() => {});
  const user = options.asRoot ? await ensureAppUser(app, deps.home) : null;
  const home = `${app.folder}/home`;
  await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  if (user !== null) {
    // As a task's: an ext4 image of [apps] home_bytes mounted on the home while the server runs,
    // so that an app that fills its home gets ENOSPC, not the box home's disk (and audit log).
    const notice = await mountTaskHome(app.folder, deps.config.apps.home_bytes);
    if (notice !== null) deps.log(`gurt: app ${app.name}: ${notice}`);
  }
  try {
    // The home is root's alone while keys are written into it, so nothing of the app's user can
    // swap a key's file for a link in the meantime; it is the app's again just before it starts.
    await prepareHome(home, null);
    const connection = await launch(app, options, user, home);
    lastRuns.set(app.folder, connection.status);
    return connection;
  } catch (error) {
    if (user !== null) await unmountHome(home, deps.log);
    throw error;
  }
}

async function launch(
  app: InstalledApp,
  options: AppLaunchOptions,
  user: TaskUser | null,
  home: string,
): Promise<AppConnection & { status: Promise<unknown> }> {
  const { deps } = options;
  const manifest = app.manifest;
  if (manifest.kind === "mcp-http") throw new Error("an mcp-http app has no process");
  const env: Record<string, string> = {
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    LANG: "C.UTF-8",
    GURT_APP_NAME: app.name,
  };
  // The manifest's plain variables first: no secret's variable is one of them (the manifest's rule).
  if (manifest.kind === "mcp") {
    for (const [name, value] of manifest.env) env[name] = value.replaceAll(HOME_PLACEHOLDER, home);
  }
  const argSecrets = new Map<string, string>();
  for (const [name, secret] of manifest.secrets) {
    const delivery = secret.delivery;
    // A key file from an earlier start goes first: a key turned off since is not left behind.
    if (delivery.kind === "file") await Deno.remove(`${home}/${delivery.name}`).catch(() => {});
    const value = keyFor(app, name, options);
    if (value === null) continue;
    if (manifest.kind === "module") env[`${SECRET_ENV_PREFIX}${name}`] = value;
    else if (delivery.kind === "env") env[delivery.name] = value;
    else if (delivery.kind === "file") {
      await writeSecretFile(`${home}/${delivery.name}`, value, user);
    } else if (delivery.kind === "arg") argSecrets.set(name, value);
  }
  if (user !== null) await Deno.chown(home, user.uid, user.gid);
  let egress: EgressServer | null = null;
  const egressSocket = `${app.folder}/egress.sock`;
  if (manifest.hosts.length > 0) {
    await Deno.remove(egressSocket).catch(() => {});
    egress = await openAppEgress(app, egressSocket, deps);
    await Deno.chmod(egressSocket, 0o600);
    if (user !== null) await Deno.chown(egressSocket, user.uid, user.gid);
    Object.assign(env, proxyEnv());
  }
  const doors: Door[] = egress === null ? [] : [{ port: EGRESS_PORT, socket: egressSocket }];
  const forwards: EgressServer[] = [];
  try {
    for (const port of manifest.ports) {
      const socket = `${app.folder}/port-${port.port}.sock`;
      forwards.push(await openAppForward(app, port, socket, deps));
      if (user !== null) await Deno.chown(socket, user.uid, user.gid);
      doors.push({ port: port.port, socket });
    }
  } catch (error) {
    await closeAll(egress, forwards);
    throw error;
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
  let child: Deno.ChildProcess;
  try {
    child = await options.sandboxes.spawn({
      task: `app-${app.instance}`,
      hostname: `gurt-app-${app.name}`,
      home,
      doors,
      readOnly: await codeOf(app.folder),
      argv,
      env,
      user,
      stdio: "program",
    });
  } catch (error) {
    await log.close().catch(() => {});
    await closeAll(egress, forwards);
    throw error;
  }
  let lastWords = "";
  const stderrDone = copyRedacted(child.stderr, log, deps.redact, (line) => (lastWords = line));
  const status = child.status.then(async (status) => {
    await stderrDone;
    await log.close().catch(() => {});
    await closeAll(egress, forwards);
    await options.sandboxes.end(`app-${app.instance}`);
    if (user !== null) await unmountHome(home, deps.log);
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
  const transport = new ProcessTransport(process);
  // A server cut off for what it wrote on stdout is killed: why it was, rather than the signal.
  return { transport, ended: () => transport.failure ?? ended, status };
}

/**
 * Unmounts the home of the app in `folder` if it is mounted (a core killed while the app ran left
 * it so): before its folder is removed, which would otherwise empty the image and stop at the
 * mount point.
 */
export function unmountAppHome(folder: string, log: (line: string) => void): Promise<void> {
  return unmountHome(`${folder}/home`, log);
}

/** Unmounts an app's home from its image, if mounted; a problem is logged. */
async function unmountHome(home: string, log: (line: string) => void): Promise<void> {
  if (!(await mountPoints()).includes(home)) return;
  for (const args of [[home], ["-l", home]]) {
    const out = await new Deno.Command("umount", {
      args,
      clearEnv: true,
      env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (out.success) return;
    if (args.length === 2) {
      log(`gurt: ${home} could not be unmounted: ${new TextDecoder().decode(out.stderr).trim()}`);
    }
  }
}

/**
 * The app's own files (its code, app.toml), each bound read-only at its path. The folder is not
 * bound whole: its home is in it, and a read-only folder bound after the home would cover it.
 */
async function codeOf(folder: string): Promise<string[]> {
  const paths: string[] = [];
  for await (const entry of Deno.readDir(folder)) {
    // The box's own files and the doors' sockets are not the app's code.
    if (!BOX_FILES.has(entry.name) && !entry.name.endsWith(".sock")) {
      paths.push(`${folder}/${entry.name}`);
    }
  }
  return paths.sort();
}

/**
 * A key the app may be given now, or null: one turned off for it or missing from the vault is left
 * out, so the server still starts and lists its tools (gurt app add), while each call of its tools
 * fails with the sentence that says which key (AppCatalog checks before every call).
 */
function keyFor(app: InstalledApp, name: string, options: AppLaunchOptions): string | null {
  if (app.manifest.secrets.get(name)?.enabled === false) return null;
  try {
    return options.readSecret(app.name, declaredOf(app), name);
  } catch {
    return null;
  }
}

/** The app's home: made once, mode 0700, the one folder the app may write. */
async function prepareHome(home: string, user: TaskUser | null): Promise<void> {
  await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  const found = await Deno.lstat(home);
  if (!found.isDirectory) throw new Error(`${home} is not a folder`);
  await Deno.chown(home, user?.uid ?? Deno.uid() ?? 0, user?.gid ?? Deno.gid() ?? 0);
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

/**
 * A TCP forward of the app (`ports` in its manifest): the init opens it on the app's loopback at
 * the same port; each connection is relayed to host:port if [egress]'s address rules allow (a
 * loopback or private address only for a host in allow_private_hosts), else refused and recorded
 * as app_blocked.
 */
function openAppForward(
  app: InstalledApp,
  port: AppPort,
  socketPath: string,
  deps: BrokerDeps,
): Promise<EgressServer> {
  const egress = deps.config.egress;
  return serveForward({
    socketPath,
    host: port.host,
    port: port.port,
    policy: () => ({
      hosts: [],
      allowPrivate: egress.allow_private_hosts,
      resolve: egress.resolve,
      unknown: "deny",
    }),
    ownAddresses: () => Deno.networkInterfaces().map((face) => face.address),
    onBlocked: async (place) => {
      await deps.audit.append({ type: "app_blocked", app: app.name, ...place }).catch((error) =>
        deps.log(`gurt: app ${app.name}: app_blocked not audited: ${error.message}`)
      );
    },
  });
}

async function closeAll(egress: EgressServer | null, forwards: EgressServer[]): Promise<void> {
  await Promise.allSettled([egress, ...forwards].map((server) => server?.close()));
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

/**
 * fetch, with each answer's body cut off with an error past `max` bytes: a remote server cannot
 * fill the core's memory with one endless answer (the SDK reads whole answers and event streams).
 */
function cappedFetch(max: number): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (response.body === null) return response;
    let seen = 0;
    const capped = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.length;
          if (seen > max) {
            controller.error(
              new Error(`the app's server sent an answer of more than ${max} bytes`),
            );
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(capped, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

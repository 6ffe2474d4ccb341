/**
 * Starting a task's worker, in its task's sandbox (mod/sandbox): the task's user, its own process
 * group (so stopping it reaches every descendant), and an environment holding only BOX_SOCKET,
 * BOX_TASK, its doors, the box CA bundle and what a program needs to run. No vault value, no owner
 * variable.
 */
import { adapterOf, missingAgent } from "../agents/mod.ts";
import type { TaskRecord } from "../broker/mod.ts";
import {
  caEnv,
  EGRESS_PORT,
  MODEL_PORT,
  modelEnv,
  PLACEHOLDER_KEY,
  proxyEnv,
  type TaskSandboxes,
} from "../sandbox/mod.ts";
import { gurtInvocation } from "./self_command.ts";
import type { TaskUser } from "./task_users.ts";
import { WorkerLog } from "./worker_log.ts";

/**
 * The environment a worker gets: nothing of the core's but LANG; its home, its private /tmp, and,
 * where the task has an egress proxy, a model endpoint or the box CA bundle, every common client
 * pointed at it.
 */
export function workerEnv(
  task: TaskRecord,
  places: {
    socket: string;
    dir: string;
    egress: boolean;
    model: boolean;
    ca: boolean;
    factory?: boolean;
  },
): Record<string, string> {
  const env: Record<string, string> = {
    BOX_SOCKET: places.socket,
    BOX_TASK: task.id,
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: `${places.dir}/home`,
    TMPDIR: "/tmp", // the sandbox's own, counted in the task's memory
    DENO_DIR: `${places.dir}/home/.deno`,
    NO_COLOR: "1",
    // Deno asks dl.deno.land for a newer release, once a day per DENO_DIR: each task's is new.
    DENO_NO_UPDATE_CHECK: "1",
    ...(places.egress ? proxyEnv() : {}),
    ...(places.model ? modelEnv() : {}),
    ...(places.ca ? caEnv() : {}),
    // Only where the vault holds Factory's key: Droid takes a FACTORY_API_KEY to mean "use Factory".
    ...(places.model && places.factory === true ? { FACTORY_API_KEY: PLACEHOLDER_KEY } : {}),
  };
  const lang = Deno.env.get("LANG");
  if (lang !== undefined) env.LANG = lang;
  return env;
}

/**
 * The longest prompt a cmd worker gets as BOX_PROMPT, in bytes: Linux refuses to start a program
 * with one environment string of 128 KiB or more. GET /task always has the whole prompt.
 */
export const MAX_PROMPT_ENV_BYTES = 100_000;

/** Where a worker's task lives, and how its sandbox is made. */
export interface WorkerPlaces {
  socket: string;
  dir: string;
  user: TaskUser | null;
  logBytes: number;
  sandboxes: TaskSandboxes;
  /** The task's egress proxy socket, opened on EGRESS_PORT inside; null for none. */
  egress: string | null;
  /** The task's model endpoint socket, opened on MODEL_PORT inside; null for none. */
  model: string | null;
  /**
   * The box CA's bundle.pem on the host (BoxCa's bundlePath), copied read-only to CA_BUNDLE_PATH in
   * the sandbox and named by caEnv's variables; null or absent for none.
   */
  caBundle?: string | null;
  /** Whether the vault holds FACTORY_API_KEY: the worker then gets its placeholder. */
  factory?: boolean;
  /** The task's workdirs (task_workdirs.ts): its binds and working directory; null for none. */
  workdir?: { binds: readonly WorkdirBindSpec[]; cwd: string | null; writable: boolean } | null;
  /** The task's credential placeholders' variables (task_credentials.ts); the box's own win. */
  env?: Record<string, string>;
}

/** One bind of a workdir, as the sandbox takes it. */
interface WorkdirBindSpec {
  source: string;
  dest: string;
  writable: boolean;
}

/**
 * Starts the worker of `task` in its sandbox; its stdout and stderr go to tasks/<id>/worker.log,
 * capped at `places.logBytes` (gurt.toml's `[tasks] worker_log_bytes`).
 */
export async function spawnWorker(
  task: TaskRecord,
  places: WorkerPlaces,
): Promise<Deno.ChildProcess | null> {
  let program: string;
  let args: string[];
  if (task.worker.kind === "none") return null;
  const caBundle = places.caBundle ?? null;
  const env = workerEnv(task, {
    ...places,
    egress: places.egress !== null,
    model: places.model !== null,
    ca: caBundle !== null,
    factory: places.factory,
  });
  for (const [name, value] of Object.entries(places.env ?? {})) {
    if (!Object.hasOwn(env, name)) env[name] = value;
  }
  // The task's first workdir, its working directory, named for a worker that changes its own.
  if (places.workdir?.cwd) env.BOX_WORKDIR = places.workdir.cwd;
  const readOnly: string[] = [];
  if (task.worker.kind === "test") {
    ({ program, args } = gurtInvocation(["test-worker", "--script", task.worker.script]));
    readOnly.push(task.worker.script);
  } else if (task.worker.kind === "loop") {
    ({ program, args } = gurtInvocation(["loop"]));
  } else if (task.worker.kind === "agent") {
    // A missing agent fails the task at once, saying how to install it.
    const missing = await missingAgent(adapterOf(task.worker.agent));
    if (missing !== null) throw new Error(missing);
    ({ program, args } = gurtInvocation(["agent-run", task.worker.agent]));
  } else {
    [program, ...args] = task.worker.command;
    env.BOX_MCP_CONFIG = await writeMcpConfig(task, places);
    readOnly.push(env.BOX_MCP_CONFIG);
    // The prompt, as GET /task gives it, unless it is too long for an environment variable.
    if (new TextEncoder().encode(task.prompt).length <= MAX_PROMPT_ENV_BYTES) {
      env.BOX_PROMPT = task.prompt;
    }
  }
  const log = await WorkerLog.open(`${places.dir}/worker.log`, places.logBytes);
  try {
    const found = await findProgram(program, env.PATH, { cwd: `${places.dir}/home`, ...places });
    const child = await places.sandboxes.spawn({
      task: task.id,
      home: `${places.dir}/home`,
      doors: [
        { path: places.socket, socket: places.socket },
        ...(places.egress === null ? [] : [{ port: EGRESS_PORT, socket: places.egress }]),
        ...(places.model === null ? [] : [{ port: MODEL_PORT, socket: places.model }]),
      ],
      readOnly,
      argv: [found, ...args],
      env,
      user: places.user,
      caBundle,
      binds: places.workdir?.binds,
      cwd: places.workdir?.cwd ?? undefined,
      noNodes: places.workdir?.writable === true,
    });
    Promise.all([copy(child.stdout, log), copy(child.stderr, log)]).finally(() =>
      log.close().catch(() => {})
    );
    return child;
  } catch (error) {
    await log.close().catch(() => {});
    throw error;
  }
}

/**
 * The program a worker runs, as the task's user finds it on the worker's PATH; throws when there is
 * none it may run, so a worker that cannot start still fails at once rather than inside setpriv.
 */
async function findProgram(
  program: string,
  path: string,
  places: { cwd: string; user: TaskUser | null },
): Promise<string> {
  const user = places.user;
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", 'command -v -- "$1"', "gurt-find", program],
    env: { PATH: path },
    clearEnv: true,
    cwd: places.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    ...(user === null ? {} : { uid: user.uid, gid: user.gid }),
  }).output();
  const found = new TextDecoder().decode(out.stdout).trim();
  if (!out.success || found === "") {
    throw new Error(
      `no program ${JSON.stringify(program)} that the task's user may run was found on ${path}`,
    );
  }
  return program.includes("/") ? program : found;
}

/**
 * Offers a command worker the box's MCP server (`gurt mcp` on its socket), in the shape MCP clients
 * read (`{mcpServers: {box: {command, args, env}}}`), at tasks/<id>/mcp.json: in the task's folder,
 * which only the core may write, and never in its home. There the task's user could have put a
 * link (or a FIFO) for the core to write through as root, at a restart.
 */
async function writeMcpConfig(
  task: TaskRecord,
  places: { socket: string; dir: string },
): Promise<string> {
  const { program, args } = gurtInvocation(["mcp"]);
  const path = `${places.dir}/mcp.json`;
  const server = { command: program, args, env: { BOX_SOCKET: places.socket, BOX_TASK: task.id } };
  await Deno.writeTextFile(path, JSON.stringify({ mcpServers: { box: server } }, null, 2) + "\n", {
    mode: 0o644,
  });
  await Deno.chmod(path, 0o644); // readable by the task's user; written by the core only
  return path;
}

/**
 * Copies a worker's output into its log until the worker closes it. The output is a convenience:
 * a write that fails loses that chunk, and the stream is still read to its end, so a worker never
 * waits on a full pipe.
 */
async function copy(stream: ReadableStream<Uint8Array>, log: WorkerLog): Promise<void> {
  try {
    for await (const chunk of stream) await log.write(chunk).catch(() => {});
  } catch {
    // The stream broke: nothing more to read.
  }
}

/** Stops a worker's whole process group: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopWorker(pid: number, graceMs: number): Promise<void> {
  try {
    Deno.kill(-pid, "SIGTERM");
  } catch {
    return; // already gone
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  try {
    Deno.kill(-pid, "SIGKILL");
  } catch {
    // gone in between
  }
}

/** Whether a process still exists. */
export function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `pid` is still the worker of task `id`: its environment holds the BOX_TASK the core gave
 * it. A pid from task.json may since have been reused by another process, which must not be
 * stopped; an environment that cannot be read counts as not the worker.
 */
export function isWorkerOf(pid: number, id: string): boolean {
  try {
    const environ = Deno.readTextFileSync(`/proc/${pid}/environ`);
    return environ.split("\0").includes(`BOX_TASK=${id}`);
  } catch {
    return false;
  }
}

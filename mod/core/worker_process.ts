/**
 * Starting a task's worker: its own process group (so stopping it reaches every descendant), the
 * task's user as root, and an environment holding only BOX_SOCKET, BOX_TASK and what a program
 * needs to run. No vault value, no owner variable.
 */
import type { TaskRecord } from "../broker/mod.ts";
import { gurtInvocation } from "./self_command.ts";
import type { TaskUser } from "./task_users.ts";
import { WorkerLog } from "./worker_log.ts";

/** The environment a worker gets: nothing of the core's but PATH, LANG and the CA bundle. */
export function workerEnv(task: TaskRecord, socket: string, dir: string): Record<string, string> {
  const env: Record<string, string> = {
    BOX_SOCKET: socket,
    BOX_TASK: task.id,
    PATH: "/usr/local/bin:/usr/bin:/bin",
    HOME: `${dir}/home`,
    // Temporary files in the task's own home (made with it), not in a /tmp every user can read.
    TMPDIR: `${dir}/home/tmp`,
    DENO_DIR: `${dir}/home/.deno`,
    NO_COLOR: "1",
  };
  const lang = Deno.env.get("LANG");
  if (lang !== undefined) env.LANG = lang;
  return env;
}

/**
 * Starts the worker of `task`; its stdout and stderr go to tasks/<id>/worker.log, capped at
 * `places.logBytes` (gurt.toml's `[tasks] worker_log_bytes`).
 */
export async function spawnWorker(
  task: TaskRecord,
  places: { socket: string; dir: string; user: TaskUser | null; logBytes: number },
): Promise<Deno.ChildProcess | null> {
  let program: string;
  let args: string[];
  if (task.worker.kind === "none") return null;
  const env = workerEnv(task, places.socket, places.dir);
  // A task made by an older core has no tmp in its home; nothing is made there for it now (the
  // home is the task's, and its user may have put anything in it), so it keeps the usual /tmp.
  if (!(await Deno.lstat(env.TMPDIR).then(() => true, () => false))) delete env.TMPDIR;
  if (task.worker.kind === "test") {
    ({ program, args } = gurtInvocation(["test-worker", "--script", task.worker.script]));
  } else if (task.worker.kind === "loop") {
    ({ program, args } = gurtInvocation(["loop"]));
  } else {
    [program, ...args] = task.worker.command;
    env.BOX_MCP_CONFIG = await writeMcpConfig(task, places);
  }
  const log = await WorkerLog.open(`${places.dir}/worker.log`, places.logBytes);
  try {
    const found = await findProgram(program, env.PATH, { cwd: `${places.dir}/home`, ...places });
    const child = new Deno.Command(SETPRIV, {
      args: [...dropTo(places.user), "--", found, ...args],
      env,
      clearEnv: true,
      cwd: `${places.dir}/home`,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    Promise.all([copy(child.stdout, log), copy(child.stderr, log)]).finally(() =>
      log.close().catch(() => {})
    );
    return child;
  } catch (error) {
    await log.close().catch(() => {});
    throw error;
  }
}

/** The program that starts a worker: it drops root (as root) and sets no_new_privs, then execs it. */
const SETPRIV = "/usr/bin/setpriv";

/**
 * setpriv's options for a worker: as root, the task's uid and gid with no supplementary group, no
 * capability in any set; always no_new_privs, so no setuid or setgid file, nor a file capability,
 * gains any process of the task anything.
 */
export function dropTo(user: TaskUser | null): string[] {
  const always = ["--no-new-privs"];
  if (user === null) return always;
  return [
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
    ...always,
  ];
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

/**
 * A task's home of bounded size: tasks/<id>/home is an ext4 file system of `[tasks] home_bytes`,
 * made in a sparse image file beside it (tasks/<id>/home.img, 0600, root's) and loop-mounted there
 * by the core, as root, nosuid and nodev, when the task starts or a restarted core reopens it. A
 * task that fills it gets ENOSPC inside; the box home's disk, and the audit log on it, keep the
 * rest. The image takes on disk only what the task wrote, so before a task starts the core checks
 * that the box home's file system could still hold every live task's home filled to its size and
 * keep HOME_RESERVE_BYTES free for the log (homeRoomProblem). When the task ends its home is made
 * read-only and stays mounted for the owner while the core runs; a core that stops unmounts every
 * home it finds mounted, and one that starts unmounts those of tasks that are not live. The files
 * stay in the image: `mount -o loop,ro tasks/<id>/home.img DIR` shows them (runbook.md).
 *
 * Only as root: without it the core cannot mount, and homes are not bounded (its notice says so).
 */

import { HttpError } from "../common/mod.ts";

/** The image of a task's home, in its task folder. */
export const HOME_IMAGE = "home.img";

/** What the box home's file system keeps free beyond every live task's home: the log's room. */
export const HOME_RESERVE_BYTES = 1024 * 1024 * 1024;

const PATH_ENV = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" };

/** Runs a system program; its error text, or null when it succeeded. */
async function run(program: string, args: string[]): Promise<string | null> {
  const out = await new Deno.Command(program, {
    args,
    clearEnv: true,
    env: PATH_ENV,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (out.success) return null;
  return new TextDecoder().decode(out.stderr).trim() || `${program} exited with ${out.code}`;
}

/**
 * The mount points of this mount namespace, by findmnt (Deno lets no scoped role read
 * /proc/self/mountinfo).
 */
export async function mountPoints(): Promise<string[]> {
  const out = await new Deno.Command("findmnt", {
    args: ["-r", "-n", "-o", "TARGET"],
    clearEnv: true,
    env: PATH_ENV,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`findmnt failed: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  // -r writes a space, a tab, a newline or a backslash in a path as \xNN.
  return new TextDecoder().decode(out.stdout).split("\n").filter((line) => line !== "").map((
    line,
  ) => line.replace(/\\x([0-9a-fA-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16))));
}

/**
 * Mounts the task's home (`dir` is tasks/<id>), making its image of `bytes` first if there is
 * none; nothing when it is mounted already (a core that was killed left it). Returns a notice when
 * the home cannot be bounded (a task started by an older core, whose home already holds files),
 * else null. Throws with the system's words when the image cannot be made or mounted.
 */
export async function mountTaskHome(dir: string, bytes: number): Promise<string | null> {
  const home = `${dir}/home`;
  const image = `${dir}/${HOME_IMAGE}`;
  if ((await mountPoints()).includes(home)) {
    await run("mount", ["-o", "remount,rw,nosuid,nodev", home]);
    return null;
  }
  let made = false;
  if (!(await exists(image))) {
    for await (const _ of Deno.readDir(home)) {
      return `the home of ${dir} holds files from before homes had a size; it is not bounded`;
    }
    const file = await Deno.open(image, { createNew: true, write: true, mode: 0o600 });
    try {
      await file.truncate(bytes);
    } finally {
      file.close();
    }
    const problem = await run("mkfs.ext4", [
      "-q",
      "-F",
      "-m",
      "0",
      "-E",
      "lazy_itable_init=1,lazy_journal_init=1",
      image,
    ]);
    if (problem !== null) {
      await Deno.remove(image).catch(() => {});
      throw new Error(`its home's image could not be made: ${problem}`);
    }
    made = true;
  }
  const problem = await run("mount", [
    "-t",
    "ext4",
    "-o",
    "loop,nosuid,nodev,noatime",
    image,
    home,
  ]);
  if (problem !== null) throw new Error(`its home could not be mounted: ${problem}`);
  if (made) await Deno.remove(`${home}/lost+found`).catch(() => {});
  return null;
}

/** The line `gurt serve` says at start about its tasks' homes. */
export function homesNotice(asRoot: boolean, bytes: number): string {
  return asRoot
    ? `gurt: task homes: an ext4 image of ${
      Math.floor(bytes / (1024 * 1024))
    } MB each ([tasks] home_bytes)`
    : "gurt: task homes: not bounded (only root may mount each task's home from its image); see runbook.md#task-limits-unenforced";
}

/** Makes an ended task's mounted home read-only: its files stay for the owner, unchanged. */
export async function closeTaskHome(dir: string): Promise<void> {
  const home = `${dir}/home`;
  if (!(await mountPoints()).includes(home)) return;
  await run("mount", ["-o", "remount,ro,nosuid,nodev", home]);
}

/**
 * Unmounts the homes mounted under `tasksDir` (BOX_HOME/tasks) but those of the tasks in `keep`;
 * what went wrong, one sentence each.
 */
export async function unmountTaskHomes(
  tasksDir: string,
  keep: ReadonlySet<string> = new Set(),
): Promise<string[]> {
  const problems: string[] = [];
  const prefix = `${tasksDir}/`;
  for (const point of await mountPoints()) {
    if (!point.startsWith(prefix) || !point.endsWith("/home")) continue;
    const task = point.slice(prefix.length, -"/home".length);
    if (task.includes("/") || keep.has(task)) continue;
    const problem = await run("umount", [point]) === null
      ? null
      : await run("umount", ["-l", point]);
    if (problem !== null) {
      problems.push(`the home of task ${task} could not be unmounted: ${problem}`);
    }
  }
  return problems;
}

/** Bytes free for an unprivileged writer on the file system of `path` (statfs, by stat -f). */
export async function freeBytes(path: string): Promise<number> {
  const out = await new Deno.Command("stat", {
    args: ["-f", "-c", "%a %S", path],
    clearEnv: true,
    env: PATH_ENV,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const [blocks, size] = new TextDecoder().decode(out.stdout).trim().split(" ").map(Number);
  if (!out.success || !Number.isFinite(blocks) || !Number.isFinite(size)) {
    throw new Error(
      `the free space of ${path} cannot be read: ${new TextDecoder().decode(out.stderr).trim()}`,
    );
  }
  return blocks * size;
}

/** What a home's image may still take on disk: its size less what it holds already. */
export async function homeGrowth(dir: string): Promise<number> {
  try {
    const info = await Deno.stat(`${dir}/${HOME_IMAGE}`);
    return Math.max(0, info.size - (info.blocks ?? 0) * 512);
  } catch {
    return 0;
  }
}

/**
 * Null when a new task's home of `bytes` fits: the box home's file system (`boxHome`) keeps
 * HOME_RESERVE_BYTES free even with every live home (`liveDirs`) and the new one filled; else the
 * refusal's sentence.
 */
export async function homeRoomProblem(
  boxHome: string,
  options: { bytes: number; liveDirs: readonly string[] },
): Promise<string | null> {
  const free = await freeBytes(boxHome);
  let growth = 0;
  for (const dir of options.liveDirs) growth += await homeGrowth(dir);
  const left = free - growth - options.bytes;
  if (left >= HOME_RESERVE_BYTES) return null;
  const mb = (n: number) => `${Math.floor(n / (1024 * 1024))} MB`;
  return `no task can start: ${boxHome} has ${mb(free)} free, live tasks' homes may still take ` +
    `${mb(growth)} and a new one ${
      mb(options.bytes)
    } ([tasks] home_bytes), which would leave less ` +
    `than the ${mb(HOME_RESERVE_BYTES)} kept for the audit log; see runbook.md#task-home-no-room`;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

/**
 * The homes of one core's tasks, under `tasksDir` (BOX_HOME/tasks): bounded as root, else left as
 * they are (every method does nothing).
 */
export class TaskHomes {
  constructor(
    readonly options: {
      asRoot: boolean;
      boxHome: string;
      tasksDir: string;
      bytes: number;
      log: (line: string) => void;
    },
  ) {}

  /** Throws the 507 refusal when a new task's home would not fit beside the live ones (`live`). */
  async checkRoom(live: Iterable<string>): Promise<void> {
    if (!this.options.asRoot) return;
    const problem = await homeRoomProblem(this.options.boxHome, {
      bytes: this.options.bytes,
      liveDirs: [...live].map((task) => `${this.options.tasksDir}/${task}`),
    });
    if (problem !== null) throw new HttpError(507, problem);
  }

  /** Mounts task `task`'s home (made on its first start); throws when it cannot. */
  async open(task: string): Promise<void> {
    if (!this.options.asRoot) return;
    const unbounded = await mountTaskHome(`${this.options.tasksDir}/${task}`, this.options.bytes);
    if (unbounded !== null) this.options.log(`gurt: task ${task}: ${unbounded}`);
  }

  /** Makes an ended task's home read-only. */
  async close(task: string): Promise<void> {
    if (this.options.asRoot) await closeTaskHome(`${this.options.tasksDir}/${task}`);
  }

  /** Unmounts every home but those of `keep`, saying what could not be. */
  async unmountAll(keep: ReadonlySet<string> = new Set()): Promise<void> {
    if (!this.options.asRoot) return;
    for (const problem of await unmountTaskHomes(this.options.tasksDir, keep)) {
      this.options.log(`gurt: ${problem}`);
    }
  }
}

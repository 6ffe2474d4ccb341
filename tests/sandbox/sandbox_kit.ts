/**
 * The sandbox tests' kit: a task folder as the core makes it (a home owned by the task's user, a
 * state folder of root's) with TaskSandboxes prepared in it, and a shell script run there as the
 * task's worker. As root, like the tests that use it.
 */
import { type Door, mountTaskHome, TaskSandboxes } from "../../mod/sandbox/mod.ts";

const root = new URL("../../", import.meta.url).pathname;

/** A task's folder and the sandboxes to run its worker in. */
export interface SandboxBox {
  /** The folder: `run` (the sandboxes' state, root's), `home` (the task user's). */
  dir: string;
  home: string;
  /** A socket path in `dir`, for a test's own door. */
  socket: string;
  sandboxes: TaskSandboxes;
  task: string;
  user: { uid: number; gid: number };
}

/** The limits of a box's sandbox; the defaults are the sandbox tests'. */
export interface SandboxLimits {
  memoryBytes?: number;
  maxProcesses?: number;
  tmpBytes?: number;
  /** The size of the home, mounted as the core mounts it (mod/sandbox/task_home.ts); none: not bounded. */
  homeBytes?: number;
}

/** Makes a box for the task user `user`, runs `fn` with it, then ends its task and removes it. */
export async function withSandboxBox(
  user: { uid: number; gid: number },
  fn: (box: SandboxBox) => Promise<void>,
  limits: SandboxLimits = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-sandbox-test-" });
  await Deno.chmod(dir, 0o711);
  const state = `${dir}/run`;
  await Deno.mkdir(state, { mode: 0o700 });
  const home = `${dir}/home`;
  await Deno.mkdir(home, { mode: 0o700 });
  if (limits.homeBytes !== undefined) await mountTaskHome(dir, limits.homeBytes);
  await Deno.chown(home, user.uid, user.gid);
  const socket = `${dir}/broker.sock`;
  const task = `t${crypto.randomUUID().slice(0, 8)}`;
  const { sandboxes } = await TaskSandboxes.prepare(state, {
    limits: {
      memoryBytes: limits.memoryBytes ?? 512 * 1024 * 1024,
      maxProcesses: limits.maxProcesses ?? 64,
      cpus: 1,
    },
    tmpBytes: limits.tmpBytes ?? 64 * 1024 * 1024,
    program: [root],
  });
  try {
    await fn({ dir, home, socket, sandboxes, task, user });
  } finally {
    await sandboxes.end(task);
    if (limits.homeBytes !== undefined) {
      await new Deno.Command("umount", { args: [home], stderr: "null" }).output();
    }
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Runs a script as the box's worker (with /bin/sh, or the `shell` given), with `env` added to its
 * PATH and HOME and the box CA bundle `caBundle` (a host path) given to the sandbox; its status and
 * output.
 */
export async function runInBox(
  box: SandboxBox,
  script: string,
  options: {
    doors?: Door[];
    shell?: string;
    env?: Record<string, string>;
    caBundle?: string | null;
  } = {},
): Promise<{ code: number; out: string; err: string }> {
  const child = await box.sandboxes.spawn({
    task: box.task,
    home: box.home,
    doors: options.doors ?? [],
    readOnly: [],
    argv: [options.shell ?? "/bin/sh", "-c", script],
    env: { PATH: "/usr/bin:/bin", HOME: box.home, ...options.env },
    user: box.user,
    caBundle: options.caBundle ?? null,
  });
  const [status, out, err] = await Promise.all([
    child.status,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  return { code: status.code, out, err };
}

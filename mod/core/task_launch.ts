/**
 * Launching a task's worker, once its socket answers: its user and home (as root), its credential
 * room, its two network doors, its workdirs, and its worker in its sandbox, each step named, so a
 * task that cannot start fails at once saying which step and why (a home its user cannot reach:
 * which folder closes the way).
 */
import type { BrokerDeps, TaskHandle } from "../broker/mod.ts";
import type { BoxCa } from "../box-ca/mod.ts";
import type { EgressServer, TlsFront } from "../egress/mod.ts";
import { KEY_NAMES, type ModelEndpoint } from "../model-proxy/mod.ts";
import type { TaskHomes, TaskSandboxes } from "../sandbox/mod.ts";
import { taskDir, taskSocketPath } from "../config/mod.ts";
import { firstClosedFolder, unreachableText } from "./home_reach.ts";
import { type CredentialDialer, openCredentialRoom } from "./task_credentials.ts";
import { openTaskDoors } from "./task_doors.ts";
import { ensureTaskUser, type TaskUser } from "./task_users.ts";
import type { TaskWorkdirs } from "./task_workdirs.ts";
import { spawnWorker } from "./worker_process.ts";

/** What a launch sets as it goes, so that ending the task closes what was opened. */
export interface Launching {
  handle: TaskHandle;
  user: TaskUser | null;
  /** The task's egress proxy, once open. */
  egress: EgressServer | null;
  /** The task's model endpoint, once open. */
  model: ModelEndpoint | null;
}

/** What launching needs from the task manager. */
export interface LaunchContext {
  deps: BrokerDeps;
  /** False when a task is reopened at a restart: its earlier sandbox goes first. */
  fresh: boolean;
  asRoot: boolean;
  homes: TaskHomes;
  sandboxes: TaskSandboxes;
  interception?: { front: TlsFront; caBundle: string; ca?: BoxCa };
  dialer: CredentialDialer;
  workdirs: TaskWorkdirs;
  /** For [egress] unknown = "ask". */
  ask(host: string, port: number): Promise<boolean>;
}

const SPAWN_STEP = "the worker could not start";

/** Launches the worker of `live`; its process (null for none), or why it failed. */
export async function launchTask(
  live: Launching,
  ctx: LaunchContext,
): Promise<{ child: Deno.ChildProcess | null } | { failed: string }> {
  const { deps } = ctx;
  const record = live.handle.record;
  const dir = taskDir(deps.home, record.id);
  const socket = taskSocketPath(deps.home, record.id);
  const egressPath = `${dir}/egress.sock`;
  const modelPath = `${dir}/model.sock`;
  let step = "its user could not be made ready";
  try {
    if (ctx.asRoot) {
      step = "its home could not be mounted";
      await ctx.homes.open(record.id);
      step = "its user could not be made ready";
      live.user = await ensureTaskUser(record.id, deps.home);
      await Deno.chown(socket, live.user.uid, live.user.gid);
      await Deno.chown(`${dir}/home`, live.user.uid, live.user.gid);
      await Deno.chmod(dir, 0o711);
    }
    step = "its credentials could not be given";
    const credentials = await openCredentialRoom(live.handle, {
      deps,
      dir,
      front: ctx.interception?.front,
      ca: ctx.interception?.ca,
      dialer: ctx.dialer,
    });
    step = "its egress proxy or its model endpoint could not be opened";
    const doors = await openTaskDoors(live.handle, {
      deps,
      paths: { egress: egressPath, model: modelPath },
      user: live.user,
      front: ctx.interception?.front,
      credentials: credentials?.intercept,
      placeholders: (record.credentials ?? []).map((given) => given.placeholder),
      ask: (host, port) => ctx.ask(host, port),
    });
    live.egress = doors.egress;
    live.model = doors.model;
    step = "its workdir could not be given";
    const workdir = await ctx.workdirs.open(live.handle, live.user);
    step = SPAWN_STEP;
    // What an earlier sandbox of the task left in its cgroup (a core that was killed) goes first.
    if (!ctx.fresh) await ctx.sandboxes.end(record.id);
    const child = await spawnWorker(record, {
      socket,
      dir,
      user: live.user,
      logBytes: deps.config.tasks.worker_log_bytes,
      sandboxes: ctx.sandboxes,
      egress: egressPath,
      model: modelPath,
      caBundle: credentials?.caBundle ?? ctx.interception?.caBundle ?? null,
      env: credentials?.env,
      factory: deps.vault.value(KEY_NAMES.factory) !== undefined,
      workdir,
    });
    return { child };
  } catch (error) {
    // A worker whose user cannot reach its home fails with the OS's bare "Permission denied":
    // say which folder closes the way, and to whom.
    const user = step === SPAWN_STEP ? live.user : null;
    const closed = user === null ? null : await firstClosedFolder(`${dir}/home`, user);
    const who = `its user ${user?.name} (uid ${user?.uid}) cannot reach its home ${dir}/home`;
    return {
      failed: closed === null
        ? `${step}: ${describe(error)}`
        : `${step}: ${unreachableText(who, closed)}`,
    };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The core's tasks: each live task has its folder, its socket, its worker, and its state in
 * task.json. A task ends when its worker exits (done or failed) or the owner stops it; ending closes
 * its socket and its pending approvals (denied, answered by `task ended`).
 */
import {
  type BrokerDeps,
  closeTaskApprovals,
  handleAsk,
  isLive,
  Journal,
  newTaskId,
  publicTask,
  readTask,
  readTasks,
  spendRows,
  TaskHandle,
  type TaskRecord,
  taskRoutes,
  type TaskState,
  withdrawAll,
  writeTask,
} from "../broker/mod.ts";
import { HttpError } from "../common/mod.ts";
import { taskDir, taskSocketPath } from "../config/mod.ts";
import type { StartTask } from "../admin/mod.ts";
import { serveSocket } from "./home_layout.ts";
import { removeTaskUser, taskUsers } from "./task_users.ts";
import type { TlsFront } from "../egress/mod.ts";
import { TaskHomes, type TaskSandboxes } from "../sandbox/mod.ts";
import { createTask, missingModelKey } from "./task_create.ts";
import { type TaskLog, taskLog } from "./task_log.ts";
import { alive, isWorkerOf, stopWorker } from "./worker_process.ts";
import type { GuardedServer } from "../net/mod.ts";
import type { ToolRegistry } from "../tools/mod.ts";
import { TaskWorkdirs } from "./task_workdirs.ts";
import type { BoxCa } from "../box-ca/mod.ts";
import { CredentialDialer, giveCredentials } from "./task_credentials.ts";
import { type Launching, launchTask } from "./task_launch.ts";
import { adminSocketPath } from "../config/mod.ts";

interface Live extends Launching {
  server: GuardedServer;
  child: Deno.ChildProcess | null;
  writes: Promise<void>;
  /** The lines the task causes in the core's log, held to a few (task_log.ts). */
  log: TaskLog;
}

const STOP_GRACE_MS = 2000;

/** Owns the live tasks of one core. */
export class TaskManager {
  readonly #live = new Map<string, Live>();
  /** Each task's home, an image of [tasks] home_bytes mounted as root (mod/sandbox/task_home.ts). */
  readonly #homes: TaskHomes;
  readonly #ending = new Set<Promise<void>>();
  #closing = false;
  /** The live tasks' workdirs (mod/workdir). */
  readonly #workdirs: TaskWorkdirs;
  /** Where the tasks' credentialed requests leave the box. */
  readonly #dialer: CredentialDialer;

  constructor(
    readonly deps: BrokerDeps,
    readonly options: {
      asRoot: boolean;
      sandboxes: TaskSandboxes;
      /**
       * The box's answer to a task's HTTPS to a model host: the TLS front serving the box CA's
       * leaves, and the CA bundle (the CA then the system roots) each task is told to trust.
       */
      interception?: { front: TlsFront; caBundle: string; ca?: BoxCa };
      /** The core's dialer for credentialed requests (task_credentials.ts); absent: a new one. */
      dialer?: CredentialDialer;
      /**
       * At a restart: opens a reopened task's kept approvals again, before its socket answers
       * (mod/broker/approval_restore.ts), so that its worker's requests join them.
       */
      reopenApprovals?: (ctx: { deps: BrokerDeps; task: TaskHandle }) => Promise<void>;
    },
  ) {
    const { home, config, log } = deps;
    const homes = { boxHome: home, tasksDir: `${home}/tasks`, bytes: config.tasks.home_bytes };
    this.#homes = new TaskHomes({ asRoot: options.asRoot, ...homes, log });
    this.#workdirs = new TaskWorkdirs(deps);
    this.#dialer = options.dialer ?? new CredentialDialer({
      socketPath: `${adminSocketPath(home).replace(/\/[^/]*$/, "")}/credential-egress.sock`,
      config,
      log,
    });
    // A task is waiting while it has pending approvals, else running: the table says when they
    // change, whoever adds or takes one.
    deps.approvals.onChange((changed) => this.#pendingChanged(changed.task));
  }

  /** The live task handle of `id`, if it is live. */
  handle(id: string): TaskHandle | undefined {
    return this.#live.get(id)?.handle;
  }

  /** Starts a new task and returns its record; `<app>.*` is every tool the app offers now. */
  async start(given: StartTask): Promise<TaskRecord> {
    const spec = { ...given, tools: expandTools(this.deps.registry, given.tools) };
    // Bad credentials are refused before anything is made.
    const credentials = await giveCredentials(this.deps.home, given.credentials ?? []);
    await this.#homes.checkRoom(this.#live.keys()); // the disk holds every live home, full
    const id = newTaskId();
    const dir = taskDir(this.deps.home, id);
    let record: TaskRecord;
    try {
      record = await createTask(this.deps, spec, { id, dir });
    } catch (error) {
      // A start that failed (a full disk, the audit log) leaves nothing half made for later starts.
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      throw error;
    }
    const noKey = record.worker.kind === "loop" || record.worker.kind === "agent"
      ? missingModelKey(this.deps, record)
      : null;
    if (noKey !== null) return await this.#failAtOnce(record, noKey);
    // Each workdir is a Decision record before anything is mounted; a denial fails the task.
    const workdirs = await this.#workdirs.decide(id, spec.workdirs);
    if ("denied" in workdirs) return await this.#failAtOnce(record, workdirs.denied);
    if (workdirs.records.length > 0 || credentials.length > 0) {
      if (workdirs.records.length > 0) record = { ...record, workdirs: workdirs.records };
      if (credentials.length > 0) record = { ...record, credentials };
      await writeTask(this.deps.home, record);
    }
    // One the owner must approve first is answered while the task waits: the start does not.
    if ((record.workdirs ?? []).some((workdir) => workdir.mode === "ask")) {
      this.#open(record, { fresh: true }).catch((error) =>
        this.deps.log(`gurt: task ${id} could not be opened: ${error}`)
      );
      return record;
    }
    return await this.#open(record, { fresh: true });
  }

  /**
   * Ends a task that cannot start (a loop with no model key, a socket that cannot be opened):
   * failed, with the reason.
   */
  async #failAtOnce(record: TaskRecord, reason: string): Promise<TaskRecord> {
    const ended: TaskRecord = {
      ...record,
      state: "failed",
      ended: this.deps.clock().toISOString(),
      endReason: reason,
    };
    await writeTask(this.deps.home, ended);
    await this.deps.audit.append({ type: "task_ended", task: record.id, state: "failed", reason });
    this.deps.log(`gurt: task ${record.id} failed at once: ${reason}`);
    return ended;
  }

  /** Reopens every task that was live when the core last stopped, and restarts its worker. */
  async restore(): Promise<string[]> {
    const restored: string[] = [];
    for (const { id, record } of await readTasks(this.deps.home)) {
      if (record === null) {
        this.deps.log(`gurt: tasks/${id}/task.json cannot be read; the task is left alone`);
        continue;
      }
      if (!isLive(record.state)) continue;
      if (record.pid !== null && alive(record.pid) && isWorkerOf(record.pid, record.id)) {
        await stopWorker(record.pid, STOP_GRACE_MS);
      }
      const opened = await this.#open({ ...record, state: "running" }, { fresh: false });
      if (isLive(opened.state)) restored.push(record.id);
    }
    if (this.options.asRoot) {
      await this.#removeStrayUsers();
      await this.#homes.unmountAll(new Set(this.#live.keys())); // a killed core's, not live now
      await this.#workdirs.sweep(new Set(this.#live.keys()));
    }
    return restored;
  }

  /**
   * Removes this home's task users that no live task holds, which a crash leaves (an older core's
   * user, which names no home, where its task is in this home). Another home's users are left to
   * that home's core: that its home cannot be seen from here (another mount namespace, a private
   * /tmp) does not mean it is gone.
   */
  async #removeStrayUsers(): Promise<void> {
    for (const user of await taskUsers()) {
      if (this.#live.has(user.task)) continue;
      const ours = user.home === this.deps.home ||
        (user.home === null &&
          await Deno.stat(`${taskDir(this.deps.home, user.task)}/task.json`).then(
            () => true,
            () => false,
          ));
      if (!ours) continue;
      const problem = await removeTaskUser(user);
      this.deps.log(
        problem ?? `gurt: removed ${user.name}, the user of task ${user.task}, which is not live`,
      );
    }
  }

  /** Every task, live or ended, newest first. */
  async list(): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for await (const entry of Deno.readDir(`${this.deps.home}/tasks`)) {
      if (!entry.isDirectory) continue;
      const live = this.#live.get(entry.name);
      try {
        const shown = live !== undefined
          ? publicTask(live.handle)
          : await this.#endedView(entry.name);
        out.push({ ...shown, pending: this.deps.approvals.ofTask(entry.name) });
      } catch {
        continue;
      }
    }
    return out.sort((a, b) => String(b.created).localeCompare(String(a.created)));
  }

  /** One task with its journal. */
  async show(id: string): Promise<Record<string, unknown>> {
    const live = this.#live.get(id);
    const journal = live?.handle.journal ?? await this.#journalOf(id);
    const task = live !== undefined ? publicTask(live.handle) : await this.#endedView(id);
    return { task, pending: this.deps.approvals.ofTask(id), journal: await journal.lines() };
  }

  /** Stops a live task: its worker's process group, its socket, its approvals. */
  async stop(id: string, reason: string): Promise<TaskRecord> {
    const live = this.#live.get(id);
    if (live === undefined) {
      await this.#journalOf(id);
      throw new HttpError(400, `task ${id} has already ended`);
    }
    await this.#end(live, "stopped", reason);
    return live.handle.record;
  }

  /** Marks task `id` running or waiting from its pending approvals, unless the core is closing. */
  #pendingChanged(id: string): void {
    const live = this.#live.get(id);
    if (this.#closing || live === undefined) return;
    const record = live.handle.record;
    if (!isLive(record.state)) return;
    const state: TaskState = this.deps.approvals.ofTask(id).length > 0 ? "waiting" : "running";
    if (state !== record.state) this.#save(live, { state });
  }

  /**
   * Withdraws every pending approval (see withdrawAll), closes every socket and stops every worker;
   * live tasks stay live on disk, a waiting one waiting, for the restart.
   */
  async close(): Promise<void> {
    this.#closing = true;
    withdrawAll(this.deps.approvals);
    for (const live of this.#live.values()) {
      if (live.child !== null) await stopWorker(live.child.pid, STOP_GRACE_MS);
      await live.egress?.close().catch(() => {});
      await live.model?.close().catch(() => {});
      await live.server.shutdown().catch(() => {});
      await live.handle.settled();
      await live.writes;
      live.handle.journal.close();
      live.handle.ended.resolve(); // followers of its journal stop waiting
    }
    this.#live.clear();
    await Promise.allSettled([...this.#ending]);
    await this.#workdirs.closeAll();
    await this.#dialer.close();
    await this.#homes.unmountAll();
  }

  /**
   * Opens a task's socket and starts its worker; its record. A task whose user cannot be made or
   * whose worker cannot start is ended at once, failed, saying why.
   */
  async #open(record: TaskRecord, options: { fresh: boolean }): Promise<TaskRecord> {
    const dir = taskDir(this.deps.home, record.id);
    const socket = taskSocketPath(this.deps.home, record.id);
    let journal: Journal | null = null;
    let server: GuardedServer;
    let handle: TaskHandle;
    const log = taskLog(this.deps, { task: record.id });
    // What the task's socket and doors log is the task's doing: held to its few lines.
    const deps: BrokerDeps = { ...this.deps, log: log.log };
    try {
      journal = await Journal.open(`${dir}/journal.jsonl`, { redact: this.deps.redact });
      handle = new TaskHandle(record, journal, socket);
      if (!options.fresh) {
        await this.options.reopenApprovals?.({ deps, task: handle }).catch((error) =>
          this.deps.log(`gurt: task ${record.id}'s approvals could not be opened again: ${error}`)
        );
      }
      await Deno.chmod(dir, 0o700); // bind inside a private folder: no window before the chmod
      const app = taskRoutes(deps, handle);
      server = await serveSocket(socket, (request) => app.fetch(request), {
        name: `task ${record.id}'s broker socket`,
        maxConnections: this.deps.config.broker.door_connections,
        headerTimeoutMs: this.deps.config.broker.header_timeout_ms,
        log: log.log,
      });
    } catch (error) {
      journal?.close();
      return await this.#failAtOnce(record, `its socket could not be opened: ${describe(error)}`);
    }
    const live: Live = {
      handle,
      server,
      child: null,
      user: null,
      egress: null,
      model: null,
      writes: Promise.resolve(),
      log,
    };
    this.#live.set(record.id, live);
    if (!options.fresh) this.#pendingChanged(record.id); // waiting, if approvals were opened again
    const launched = await launchTask(live, {
      deps,
      fresh: options.fresh,
      asRoot: this.options.asRoot,
      homes: this.#homes,
      sandboxes: this.options.sandboxes,
      interception: this.options.interception,
      dialer: this.#dialer,
      workdirs: this.#workdirs,
      ask: (host, port) => this.#askHost(live, { host, port }),
    });
    if ("failed" in launched) {
      this.deps.log(`gurt: task ${record.id} failed: ${launched.failed}`);
      await this.#end(live, "failed", launched.failed);
      return live.handle.record;
    }
    const child = launched.child;
    live.child = child;
    this.#save(live, { user: live.user?.name ?? null, pid: child?.pid ?? null });
    if (child !== null) {
      child.status.then((status) => {
        if (this.#closing || this.#live.get(record.id)?.child !== child) return;
        const reason = status.success ? null : `the worker exited with status ${status.code}`;
        this.#end(live, status.success ? "done" : "failed", reason).catch((error) =>
          this.deps.log(`gurt: task ${record.id} could not be ended cleanly: ${error}`)
        );
      });
    }
    return live.handle.record;
  }

  /**
   * [egress] unknown = "ask": a host on no list becomes an owner approval ("allow HOST:PORT for task
   * T?"), an /ask of the task's under a key of its own, so a later connection to the same place
   * joins it, and its answer holds across restarts. Approved, the place joins the task's host list.
   */
  async #askHost(live: Live, place: { host: string; port: number }): Promise<boolean> {
    const where = `${place.host}:${place.port}`;
    const answer = await handleAsk({ deps: this.deps, task: live.handle }, {
      body: { question: `allow ${where} for task ${live.handle.id}?`, key: `net.connect ${where}` },
      signal: this.deps.shutdown,
    });
    const approved = "approved" in answer && answer.approved;
    if (approved && !live.handle.record.hosts.includes(where)) {
      this.#save(live, { hosts: [...live.handle.record.hosts, where] });
    }
    return approved;
  }

  async #end(live: Live, state: TaskState, reason: string | null): Promise<void> {
    const id = live.handle.id;
    if (this.#live.get(id) !== live) return;
    this.#live.delete(id);
    // close() waits for endings under way, so the record, the audit line and the user are done.
    const ending = this.#finishEnd(live, state, reason);
    this.#ending.add(ending);
    try {
      await ending;
    } finally {
      this.#ending.delete(ending);
    }
  }

  async #finishEnd(live: Live, state: TaskState, reason: string | null): Promise<void> {
    const id = live.handle.id;
    // Closed first: a request that died with the worker would withdraw its approval unrecorded.
    await closeTaskApprovals(this.deps, id);
    if (live.child !== null) await stopWorker(live.child.pid, STOP_GRACE_MS);
    await this.options.sandboxes.end(id);
    await this.#workdirs.finish(live.handle); // its writes' summary, in its journal
    await live.egress?.close().catch(() => {});
    await live.model?.close().catch(() => {});
    this.options.interception?.front.dropRoom(id); // its own CA's listeners
    await closeTaskApprovals(this.deps, id);
    await live.server.shutdown().catch(() => {});
    await Deno.remove(live.handle.socket).catch(() => {});
    this.#save(live, {
      state,
      ended: this.deps.clock().toISOString(),
      endReason: reason === null ? null : this.deps.redact(reason),
      pid: null,
    });
    await live.handle.settled();
    await live.writes;
    live.handle.journal.close();
    live.log.close();
    await this.deps.audit.append({ type: "task_ended", task: id, state, reason }).catch((error) =>
      this.deps.log(`gurt: the end of task ${id} could not be audited: ${error.message}`)
    );
    live.handle.ended.resolve();
    if (live.user !== null) {
      const problem = await removeTaskUser(live.user);
      if (problem !== null) this.deps.log(`gurt: task ${id}: ${problem}`);
      // Its files stay for the owner, behind a folder only root may enter.
      const home = `${taskDir(this.deps.home, id)}/home`;
      await Deno.chown(home, 0, 0).then(() => Deno.chmod(home, 0o700)).catch((error) =>
        this.deps.log(`gurt: the home of task ${id} could not be closed: ${error.message}`)
      );
      await this.#homes.close(id);
    }
  }

  #save(live: Live, change: Partial<TaskRecord>): void {
    live.handle.record = { ...live.handle.record, ...change };
    const snapshot = live.handle.record;
    live.writes = live.writes.then(() => writeTask(this.deps.home, snapshot)).catch((error) =>
      this.deps.log(`gurt: task.json of ${snapshot.id} could not be written: ${error.message}`)
    );
  }

  async #journalOf(id: string): Promise<Journal> {
    if (!/^[a-z0-9]{1,24}$/.test(id)) {
      throw new HttpError(400, `${JSON.stringify(id)} is not a task id`);
    }
    try {
      await readTask(this.deps.home, id);
    } catch {
      throw new HttpError(404, `no task ${id}`);
    }
    return await Journal.open(`${taskDir(this.deps.home, id)}/journal.jsonl`);
  }

  async #endedView(id: string): Promise<Record<string, unknown>> {
    const journal = await this.#journalOf(id);
    const { user: _user, pid: _pid, ...shown } = await readTask(this.deps.home, id);
    const spend = spendRows(journal.state.models);
    return { ...shown, spentCents: journal.state.spentCents, spend };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A task's tool list as it is kept in task.json: each `<app>.*` replaced by every tool the app
 * offers when the task starts (in name order), each name checked, none twice.
 */
export function expandTools(registry: ToolRegistry, tools: readonly string[]): string[] {
  const out = new Set<string>();
  for (const tool of tools) {
    const every = /^([a-z][a-z0-9-]{0,31})\.\*$/.exec(tool);
    if (every !== null) {
      const prefix = `${every[1]}.`;
      const found = [...registry.appToolNames()].filter((name) => name.startsWith(prefix)).sort();
      if (found.length === 0) {
        throw new HttpError(
          400,
          `tools: ${JSON.stringify(tool)}: no app ${
            every[1]
          } offers any tool on this box (gurt app list shows the apps)`,
        );
      }
      for (const name of found) out.add(name);
      continue;
    }
    if (!registry.has(tool)) {
      throw new HttpError(400, `tools: ${JSON.stringify(tool)} is not a tool of this box`);
    }
    out.add(tool);
  }
  return [...out];
}

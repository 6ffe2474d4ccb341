/**
 * The core's side of a task's workdirs (mod/workdir): at the task's start each is decided by the
 * `task.workdir` grants and written as a Decision record before anything is mounted (a denial fails
 * the task at once); before its worker starts each is approved by the owner where its grant says
 * ask, checked, id-mapped and listed; at its end each is listed again, its writes summarized in the
 * journal, and unmounted.
 */
import {
  type BrokerDeps,
  canonicalJson,
  decisionEvent,
  handleAsk,
  type TaskHandle,
} from "../broker/mod.ts";
import { loadGrants, readSessionState, WORKDIR_TOOL } from "../policy/mod.ts";
import {
  decideWorkdir,
  finishWorkdir,
  type MountedWorkdir,
  mountWorkdir,
  overlaps,
  type WorkdirBind,
  workdirBinds,
  type WorkdirRecord,
  type WorkdirRequest,
} from "../workdir/mod.ts";
import { taskDir } from "../config/mod.ts";
import { mountPoints } from "../sandbox/mod.ts";

/** What a task's sandbox is given of its workdirs. */
export interface WorkdirPlaces {
  binds: WorkdirBind[];
  cwd: string | null;
  /** Whether one is writable: mknod is then refused in the task. */
  writable: boolean;
}

const REFUSED = "see runbook.md#workdir-refused";

/** The key of a workdir's Decision record and of its ask. */
function workdirKey(path: string): string {
  return `${WORKDIR_TOOL} ${path}`;
}

/** The live tasks' mounted workdirs, by task. */
export class TaskWorkdirs {
  readonly #mounted = new Map<string, MountedWorkdir[]>();
  /** Paths being mounted, by task, so two starts at once cannot both take one folder. */
  readonly #claimed = new Map<string, string[]>();

  constructor(readonly deps: BrokerDeps) {}

  /**
   * Decides each workdir of a new task and writes its Decision record; the records to keep in
   * task.json, or the reason the task may not start.
   */
  async decide(
    task: string,
    requests: readonly WorkdirRequest[],
  ): Promise<{ records: WorkdirRecord[] } | { denied: string }> {
    const records: WorkdirRecord[] = [];
    if (requests.length === 0) return { records };
    const load = await loadGrants(`${this.deps.home}/grants`, {
      appTools: this.deps.registry.appToolNames(),
    });
    const state = await readSessionState(this.deps.home, task);
    for (const request of requests) {
      const verdict = load.ok
        ? decideWorkdir(load.grants.grants, request, { taint: state.taint, now: this.deps.clock() })
        : { outcome: "denied" as const, reason: "grants_invalid" as const, grant: null };
      const outcome = verdict.outcome === "denied"
        ? { outcome: "denied" as const, reason: verdict.reason }
        : { outcome: verdict.outcome };
      await this.deps.audit.append(decisionEvent(
        {
          task,
          key: workdirKey(request.path),
          tool: WORKDIR_TOOL,
          arguments: canonicalJson({ path: request.path, read_only: request.readOnly }),
        },
        {
          outcome,
          grant: verdict.grant?.id ?? null,
          grantSha256: verdict.grant?.sha256 ?? null,
          state,
        },
      ));
      if (verdict.outcome === "denied") {
        return {
          denied:
            `the workdir ${request.path} was denied (${verdict.reason}): no task.workdir grant allows it; ${REFUSED}`,
        };
      }
      records.push({
        path: request.path,
        readOnly: request.readOnly,
        mode: verdict.outcome === "ask" ? "ask" : "auto",
        grant: verdict.grant.id,
        includeEnvFiles: verdict.grant.includeEnvFiles === true,
      });
    }
    return { records };
  }

  /**
   * Asks the owner for each ask workdir (an approval `gurt approve N` answers; it waits as long as
   * the task lives), then checks and mounts each for the task's user; throws a sentence when one
   * is refused or cannot be mounted.
   */
  async open(
    handle: TaskHandle,
    user: { uid: number; gid: number } | null,
  ): Promise<WorkdirPlaces | null> {
    const records = handle.record.workdirs ?? [];
    if (records.length === 0) return null;
    if (user === null) {
      throw new Error(
        `workdirs need the core to run as root, to id-map the owner's folder for the task's user; ${REFUSED}`,
      );
    }
    for (const record of records) {
      if (record.mode === "ask") await this.#approve(handle, record);
    }
    const id = handle.id;
    this.#claim(id, records);
    const dir = taskDir(this.deps.home, id);
    const mounted: MountedWorkdir[] = [];
    this.#mounted.set(id, mounted);
    try {
      for (const [index, record] of records.entries()) {
        const grantPath = await this.#grantPath(record);
        mounted.push(
          await mountWorkdir(record, {
            dir,
            index,
            grantPath,
            helper: `${this.deps.home}/run/idmap-helper`,
            extra: this.deps.config.tasks.protected_paths,
          }, user),
        );
      }
    } finally {
      this.#claimed.delete(id);
    }
    for (const one of mounted) {
      await handle.journal.append({
        type: "event",
        time: this.deps.clock().toISOString(),
        event: "workdir.mounted",
        detail: {
          path: one.record.path,
          mode: one.record.readOnly ? "ro" : "rw",
          grant_mode: one.record.mode,
          read_only_paths: one.covers.filter((c) => c.why === "protected").map((c) => c.rel),
          covered_env_files: one.covers.filter((c) => c.why === "env").map((c) => c.rel),
        },
      });
    }
    return workdirBinds(mounted);
  }

  /** Refuses a workdir another live task has (or is mounting), one holding the other. */
  #claim(id: string, records: readonly WorkdirRecord[]): void {
    const taken: [string, string][] = [];
    for (const [task, list] of this.#mounted) {
      for (const one of list) taken.push([task, one.record.path]);
    }
    for (const [task, paths] of this.#claimed) for (const path of paths) taken.push([task, path]);
    for (const record of records) {
      const clash = taken.find(([task, path]) => task !== id && overlaps(path, record.path));
      if (clash !== undefined) {
        throw new Error(
          `the workdir ${record.path} is in use by the live task ${clash[0]} (${
            clash[1]
          }); ${REFUSED}`,
        );
      }
    }
    this.#claimed.set(id, records.map((record) => record.path));
  }

  /** The path of the workdir's grant that holds it (the grant may have changed: the longest). */
  async #grantPath(record: WorkdirRecord): Promise<string> {
    const load = await loadGrants(`${this.deps.home}/grants`, {
      appTools: this.deps.registry.appToolNames(),
    });
    const grant = load.ok ? load.grants.grants.find((one) => one.id === record.grant) : undefined;
    const path = grant?.paths.filter((one) =>
      record.path === one || record.path.startsWith(`${one}/`)
    )
      .sort((a, b) => b.length - a.length)[0];
    if (path === undefined) {
      throw new Error(
        `the workdir ${record.path}: its grant ${record.grant} no longer allows it; ${REFUSED}`,
      );
    }
    return path;
  }

  async #approve(handle: TaskHandle, record: WorkdirRecord): Promise<void> {
    const how = record.readOnly ? "read-only" : "writable";
    for (;;) {
      const answer = await handleAsk({ deps: this.deps, task: handle }, {
        body: {
          question: `mount ${record.path} (${how}) in task ${handle.id}?`,
          key: workdirKey(record.path),
        },
        signal: this.deps.shutdown,
      });
      if ("approved" in answer) {
        if (answer.approved) return;
        throw new Error(`the owner refused the workdir ${record.path}; ${REFUSED}`);
      }
      if (this.deps.shutdown.aborted) throw new Error("the core is closing");
    }
  }

  /** Ends a task's workdirs once its sandbox is gone: the summary of each in its journal. */
  async finish(handle: TaskHandle): Promise<void> {
    const mounted = this.#mounted.get(handle.id);
    this.#mounted.delete(handle.id);
    for (const one of mounted ?? []) {
      try {
        const { protectedChanges, ...summary } = await finishWorkdir(one);
        const time = this.deps.clock().toISOString();
        await handle.journal.append({
          type: "event",
          time,
          event: "workdir.writes",
          detail: summary,
        });
        // A change under a read-only protected path (the mount should make it impossible), and one
        // under a protected name deeper in the folder, which only its top is protected against.
        const flagged = [
          ...protectedChanges.breached.map((path) => ({
            path,
            reason: "changed despite read-only",
          })),
          ...protectedChanges.nested.map((path) => ({
            path,
            reason: "written under a protected name below the workdir's top; review it",
          })),
        ];
        for (const { path, reason } of flagged.slice(0, 100)) {
          await handle.journal.append({
            type: "event",
            time,
            event: "fs.blocked",
            detail: { workdir: one.record.path, path, reason },
          });
        }
      } catch (error) {
        this.deps.log(
          `gurt: the workdir ${one.record.path} of task ${handle.id} could not be finished: ${error}`,
        );
      }
    }
  }

  /**
   * Unmounts the workdirs a killed core left mounted (tasks/<id>/workdirs/<n>) of tasks that are
   * not live now; what went wrong goes to the log.
   */
  async sweep(live: ReadonlySet<string>): Promise<void> {
    const prefix = `${this.deps.home}/tasks/`;
    for (const point of await mountPoints().catch(() => [])) {
      const match = /^([a-z0-9]{1,24})\/workdirs\/[0-9]+$/.exec(point.slice(prefix.length));
      if (!point.startsWith(prefix) || match === null || live.has(match[1])) continue;
      const out = await new Deno.Command("umount", {
        args: ["-R", "-l", point],
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).output().catch(() => null);
      if (out?.success !== true) {
        this.deps.log(`gurt: the workdir mount ${point} of an ended task could not be unmounted`);
      }
    }
  }

  /** Unmounts every live task's workdirs, unsummarized (the core is closing; a restart remounts). */
  async closeAll(): Promise<void> {
    for (const list of this.#mounted.values()) {
      for (const one of list) await finishWorkdir(one).catch(() => {});
    }
    this.#mounted.clear();
  }
}

/**
 * The execs the guest knows: running ones hold a slot (429 busy past the cap); finished ones stay
 * readable for the retention time so a poller can collect them, then are forgotten.
 */
import { GuestError } from "./errors.ts";
import {
  type ChunkListener,
  type ExecOutcome,
  type ExecSpec,
  RunningProcess,
} from "./exec_process.ts";

/** The most finished execs kept, whatever the retention time. */
export const MAX_RETAINED = 1024;

/** One exec: its id, where it runs, its process and, once finished, its outcome. */
export interface ExecRecord {
  id: string;
  cwd: string;
  process: RunningProcess;
  outcome: ExecOutcome | undefined;
  finishedAt: number | undefined;
}

/** What the guest counts since it started. */
export interface ExecCounters {
  started: number;
  finished: number;
  timed_out: number;
  cancelled: number;
  busy: number;
}

/** The limits the registry enforces. */
export interface RegistryLimits {
  maxConcurrentExecs: number;
  execRetentionMs: number;
}

/** What holds each exec's process group for the guest's life (group_watcher.ts). */
export interface GroupHolder {
  /** The value of GURT_GUEST_EXEC, which every exec's environment is given. */
  readonly mark: string;
  watch(pgid: number): void;
  close(): Promise<void>;
}

/** Tracks running and recently finished execs. */
export class ExecRegistry {
  private readonly records = new Map<string, ExecRecord>();
  /** The finished execs still kept, oldest finish first (a Map keeps insertion order). */
  private readonly finished = new Map<string, ExecRecord>();
  private active = 0;
  readonly counters: ExecCounters = {
    started: 0,
    finished: 0,
    timed_out: 0,
    cancelled: 0,
    busy: 0,
  };

  constructor(
    private readonly limits: RegistryLimits,
    private readonly watcher: GroupHolder | null = null,
  ) {}

  /** How many execs hold a slot now. */
  get running(): number {
    return this.active;
  }

  /** The ids of the execs that hold a slot now. */
  runningIds(): string[] {
    return [...this.records.values()].filter((r) => r.outcome === undefined).map((r) => r.id);
  }

  /** The slot cap. */
  get slots(): number {
    return this.limits.maxConcurrentExecs;
  }

  /** Starts an exec in a free slot, or throws 429 busy. */
  start(spec: ExecSpec, listener?: ChunkListener): ExecRecord {
    this.sweep();
    if (this.active >= this.limits.maxConcurrentExecs) {
      this.counters.busy++;
      throw new GuestError(
        "busy",
        429,
        `all ${this.limits.maxConcurrentExecs} exec slots are in use; retry when one finishes ` +
          "or raise BOX_MAX_CONCURRENT_EXECS",
      );
    }
    // The mark goes last: an exec's own env cannot set it (docs/guest-api.md#exec).
    const marked = this.watcher === null
      ? spec
      : { ...spec, env: { ...spec.env, GURT_GUEST_EXEC: this.watcher.mark } };
    const process = RunningProcess.start(marked, listener);
    if (process.byHelper) this.watcher?.watch(process.pid);
    this.active++;
    this.counters.started++;
    const record: ExecRecord = {
      id: `exec-${crypto.randomUUID()}`,
      cwd: spec.cwd,
      process,
      outcome: undefined,
      finishedAt: undefined,
    };
    this.records.set(record.id, record);
    process.done.then((outcome) => {
      record.outcome = outcome;
      record.finishedAt = Date.now();
      this.finished.set(record.id, record);
      this.active--;
      this.counters.finished++;
      if (outcome.timed_out) this.counters.timed_out++;
      if (outcome.cancelled) this.counters.cancelled++;
    });
    return record;
  }

  /** The exec with this id, or 404 not_found. */
  get(id: string): ExecRecord {
    this.sweep();
    const record = this.records.get(id);
    if (record === undefined) {
      throw new GuestError("not_found", 404, `no exec has the id ${JSON.stringify(id)}`);
    }
    return record;
  }

  /**
   * Stops a running exec; false if it had already finished or was already being stopped (only
   * the first of many cancels is true). 404 for an unknown id.
   */
  cancel(id: string): boolean {
    return this.get(id).process.stop("cancel");
  }

  /** Stops every running exec and kills what finished ones left behind; waits for them all. */
  async shutdown(): Promise<void> {
    const waits: Promise<unknown>[] = [];
    for (const record of this.records.values()) {
      record.process.stop("shutdown");
      if (!record.process.finished) waits.push(record.process.done);
    }
    await Promise.all(waits);
    for (const record of this.records.values()) record.process.killLeftovers();
    await this.watcher?.close();
  }

  /** Forgets finished execs past the retention time, and the oldest past MAX_RETAINED. */
  private sweep(): void {
    const now = Date.now();
    for (const record of this.finished.values()) {
      const expired = now - (record.finishedAt as number) >= this.limits.execRetentionMs;
      if (!expired && this.finished.size <= MAX_RETAINED) break;
      this.finished.delete(record.id);
      this.records.delete(record.id);
    }
  }
}

/**
 * One command run in its own process group: output captured under a cap, stdin written then
 * closed, a timeout that sends SIGTERM to the whole group and SIGKILL after the grace, and the
 * seed's rule for a backgrounded process that keeps the pipes open.
 */
import { OutputBuffer } from "./output_buffer.ts";
import { type Launcher, launchFailure, spawnInGroup } from "./process_group.ts";

/** What to run, fully resolved: argv, a jail-checked cwd, the child's whole environment. */
export interface ExecSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: Uint8Array | null;
  timeoutMs: number;
  killGraceMs: number;
  maxOutputBytes: number;
  /** The session helper to start it with (process_group.ts), or null for util-linux setsid. */
  sessionHelper: string | null;
}

/** How a command ended, as an exec answers it (docs/guest-api.md#exec). */
export interface ExecOutcome {
  exit_code: number | null;
  timed_out: boolean;
  cancelled: boolean;
  duration_ms: number;
  truncated: boolean;
  output_complete: boolean;
}

/** Why a running process is being stopped. */
export type StopReason = "timeout" | "cancel" | "hangup" | "shutdown";

/** Receives each captured chunk as it arrives (only the part kept under the cap). */
export type ChunkListener = (stream: "stdout" | "stderr", bytes: Uint8Array) => void;

/** How long, after the direct child exits, the guest keeps reading what is already buffered. */
export const DRAIN_MS = 100;

/** The size of the first read from a child's pipe (most commands print little)… */
const FIRST_READ = 4 * 1024;
/** …and of each later read once a read has filled the buffer. */
const READ_CHUNK = 64 * 1024;

/** A command running in its own process group. */
export class RunningProcess {
  readonly stdout: OutputBuffer;
  readonly stderr: OutputBuffer;
  readonly done: Promise<ExecOutcome>;
  readonly pid: number;
  private stopReason: StopReason | undefined;
  private exited = false;
  private childExited = false;
  private hardKilled = false;
  private graceTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly started = performance.now();

  private constructor(
    private readonly child: Deno.ChildProcess,
    private readonly launcher: Launcher,
    private readonly spec: ExecSpec,
    listener: ChunkListener | undefined,
  ) {
    this.pid = child.pid;
    this.stdout = new OutputBuffer(spec.maxOutputBytes);
    this.stderr = new OutputBuffer(spec.maxOutputBytes);
    this.done = this.run(listener);
  }

  /** Starts the command; a program that cannot be started is 400 exec_failed. */
  static start(spec: ExecSpec, listener?: ChunkListener): RunningProcess {
    const { child, launcher } = spawnInGroup({
      argv: spec.argv,
      cwd: spec.cwd,
      env: spec.env,
      stdin: spec.stdin === null ? "null" : "piped",
      helper: spec.sessionHelper,
    });
    return new RunningProcess(child, launcher, spec, listener);
  }

  /** If the program could not be started at all (no such file, not executable): why. */
  launchFailure(outcome: ExecOutcome): string | undefined {
    if (outcome.exit_code === null || this.stdout.length !== 0 || this.stderr.length > 4096) {
      return undefined;
    }
    return launchFailure({ launcher: this.launcher, argv0: this.spec.argv[0] }, {
      code: outcome.exit_code,
      stdout: this.stdout.length,
      stderr: this.stderr.text(),
    });
  }

  /** Whether the session helper started it (so its group is the guest's watcher's to hold). */
  get byHelper(): boolean {
    return this.launcher === "helper";
  }

  /** How long it has run so far, in whole milliseconds. */
  elapsedMs(): number {
    return Math.round(performance.now() - this.started);
  }

  /** Whether the process has finished and its outcome is known. */
  get finished(): boolean {
    return this.exited;
  }

  /**
   * Stops the whole process group: SIGTERM now, SIGKILL after the grace. Returns true to the one
   * call that began the stop; false if the process had already exited or another call (a cancel,
   * a timeout, a hang-up) is already stopping it, so that of many cancels exactly one is told it
   * cancelled.
   */
  stop(reason: StopReason): boolean {
    if (this.exited || this.stopReason !== undefined) return false;
    this.stopReason = reason;
    signalGroup(this.pid, "SIGTERM");
    // The grace runs on after the answer if the direct child died of SIGTERM: whatever else of
    // the group outlived it still gets SIGKILL when the grace is over.
    this.graceTimer = setTimeout(() => {
      this.graceTimer = undefined;
      if (!this.childExited) this.hardKilled = true;
      signalGroup(this.pid, "SIGKILL");
    }, this.spec.killGraceMs);
    return true;
  }

  /**
   * Sends SIGKILL now to whatever the command left running in its group (when the daemon shuts
   * down), and ends a pending grace. The leader was reaped, so a process that now has its pid
   * means the pid was reused and the group is no longer ours: then nothing is sent.
   */
  killLeftovers(): void {
    if (this.graceTimer !== undefined) {
      clearTimeout(this.graceTimer);
      this.graceTimer = undefined;
    }
    if (!this.childExited || processExists(this.pid)) return;
    if (processExists(-this.pid)) signalGroup(this.pid, "SIGKILL");
  }

  private async run(listener: ChunkListener | undefined): Promise<ExecOutcome> {
    const readers: { cancel(): Promise<void> }[] = [];
    const pumps = [
      pump(this.child.stdout, this.stdout, "stdout", listener, readers),
      pump(this.child.stderr, this.stderr, "stderr", listener, readers),
    ];
    if (this.spec.stdin !== null) writeStdin(this.child.stdin, this.spec.stdin);
    const timeout = setTimeout(() => this.stop("timeout"), this.spec.timeoutMs);
    const status = await this.child.status;
    this.childExited = true;
    clearTimeout(timeout);
    const complete = await within(Promise.all(pumps), DRAIN_MS);
    if (!complete) {
      // A process the command left behind holds the pipes: stop reading, keep what we have.
      await Promise.all(readers.map((reader) => reader.cancel().catch(() => {})));
    }
    this.exited = true;
    const timedOut = this.stopReason === "timeout";
    // The wait status (128 + signal, 143 for SIGTERM) when the child died of a signal, null when
    // SIGKILL was required, and null for an exec that was stopped on purpose (cancel, hang-up,
    // shutdown): it did not end, it was ended.
    let exitCode: number | null = status.code;
    if (status.signal !== null && this.stopReason !== undefined && !timedOut) exitCode = null;
    if (this.hardKilled) exitCode = null;
    return {
      exit_code: exitCode,
      timed_out: timedOut,
      cancelled: this.stopReason === "cancel" || this.stopReason === "hangup",
      duration_ms: this.elapsedMs(),
      truncated: this.stdout.truncated || this.stderr.truncated || !complete,
      output_complete: complete,
    };
  }
}

async function pump(
  stream: ReadableStream<Uint8Array>,
  buffer: OutputBuffer,
  name: "stdout" | "stderr",
  listener: ChunkListener | undefined,
  readers: { cancel(): Promise<void> }[],
): Promise<void> {
  // A BYOB reader reuses one buffer, so output past the cap (1 GB of `yes`) allocates nothing.
  const reader = stream.getReader({ mode: "byob" });
  readers.push(reader);
  let scratch = new ArrayBuffer(FIRST_READ);
  try {
    for (;;) {
      const size = scratch.byteLength; // the read detaches scratch
      const { done, value } = await reader.read(new Uint8Array(scratch));
      if (done || value === undefined) return;
      const kept = buffer.push(value);
      if (kept.byteLength > 0 && listener !== undefined) listener(name, kept);
      // A full small buffer means more is coming: read in large pieces from then on.
      scratch = value.byteLength === size && size < READ_CHUNK
        ? new ArrayBuffer(READ_CHUNK)
        : value.buffer as ArrayBuffer;
    }
  } catch {
    // Cancelled after the direct child exited; what was read is kept.
  }
}

function writeStdin(stream: WritableStream<Uint8Array>, bytes: Uint8Array): void {
  const writer = stream.getWriter();
  writer.write(bytes).then(() => writer.close()).catch(() => writer.abort().catch(() => {}));
}

/** Resolves true if `work` settles within `ms`, false otherwise; leaves no timer behind. */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), ms));
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Sends a signal to a whole process group; a group that is already gone is not an error. */
export function signalGroup(pgid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pgid, signal);
  } catch {
    // ESRCH: nothing of the group is left.
  }
}

/**
 * Whether a process (a pid), or a process group (a negative pid), exists: signal 0. EPERM means it
 * exists and belongs to another user.
 */
function processExists(pid: number): boolean {
  try {
    // Signal 0 checks without signalling; Deno's Signal type does not list it.
    Deno.kill(pid, 0 as unknown as Deno.Signal);
    return true;
  } catch (error) {
    return error instanceof Deno.errors.PermissionDenied;
  }
}

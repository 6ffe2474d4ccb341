/**
 * One desktop program (Xvfb, openbox, Chromium, x11vnc, websockify) run in its own process group,
 * so stopping it reaches its helpers too, with the lines it prints readable for readiness.
 */

/** How to start a program. */
export interface ProgramSpec {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Read stdout line by line (Xvfb's -displayfd, x11vnc's PORT=); otherwise discarded. */
  readStdout?: boolean;
  /** Written to its stdin, which is then closed (x11vnc's password); otherwise stdin is null. */
  stdinText?: string;
}

const KILL_GRACE_MS = 3000;

/** A running program: its pid, its stdout lines, and how it ended. */
export class RunningProgram {
  readonly exited: Promise<Deno.CommandStatus>;
  #lines: string[] = [];
  #waiters: ((line: string | undefined) => void)[] = [];
  #ended = false;
  #stopping = false;

  private constructor(readonly spec: ProgramSpec, private readonly child: Deno.ChildProcess) {
    this.exited = child.status;
    if (spec.readStdout) this.#drain(child.stdout);
  }

  /** Starts the program; throws a sentence naming the program when it cannot be run. */
  static start(spec: ProgramSpec): RunningProgram {
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(spec.command, {
        args: spec.args,
        env: spec.env,
        stdin: spec.stdinText === undefined ? "null" : "piped",
        stdout: spec.readStdout ? "piped" : "null",
        stderr: "null",
        detached: true,
      }).spawn();
    } catch (error) {
      throw new Error(
        `${spec.name} could not be started (${spec.command}: ${(error as Error).message})`,
      );
    }
    if (spec.stdinText !== undefined) {
      const writer = child.stdin.getWriter();
      writer.write(new TextEncoder().encode(spec.stdinText)).then(() => writer.close())
        .catch(() => writer.abort().catch(() => {}));
    }
    return new RunningProgram(spec, child);
  }

  /** The process id (also its process group id). */
  get pid(): number {
    return this.child.pid;
  }

  /** Whether stop() was asked for: an exit after it is expected. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** Waits for the first stdout line that `match` accepts; undefined if stdout ends first. */
  async waitForLine(match: (line: string) => boolean): Promise<string | undefined> {
    let seen = 0;
    while (true) {
      while (seen < this.#lines.length) {
        const line = this.#lines[seen++];
        if (match(line)) return line;
      }
      if (this.#ended) return undefined;
      const line = await new Promise<string | undefined>((resolve) => this.#waiters.push(resolve));
      if (line === undefined && this.#ended && seen >= this.#lines.length) return undefined;
    }
  }

  /** Sends a signal to the program alone (ffmpeg finishes its file on SIGINT). */
  signal(signal: Deno.Signal): void {
    this.#stopping = true;
    try {
      this.child.kill(signal);
    } catch {
      // already gone
    }
  }

  /** SIGTERM to the process group, SIGKILL after a grace period; resolves when it has exited. */
  async stop(): Promise<void> {
    this.#stopping = true;
    signalGroup(this.child.pid, "SIGTERM");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<"late">((resolve) => {
      timer = setTimeout(() => resolve("late"), KILL_GRACE_MS);
    });
    const outcome = await Promise.race([this.exited, grace]);
    clearTimeout(timer);
    if (outcome === "late") {
      signalGroup(this.child.pid, "SIGKILL");
      await this.exited;
    }
    // Helpers that outlived the leader (renderers, crash handlers) go with the group.
    signalGroup(this.child.pid, "SIGKILL");
  }

  async #drain(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let pending = "";
    try {
      for await (const bytes of stream) {
        pending += decoder.decode(bytes, { stream: true });
        let newline;
        while ((newline = pending.indexOf("\n")) >= 0) {
          this.#push(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
        }
      }
    } catch {
      // the pipe broke: the program is gone
    }
    if (pending !== "") this.#push(pending);
    this.#ended = true;
    for (const waiter of this.#waiters.splice(0)) waiter(undefined);
  }

  #push(line: string): void {
    if (this.#lines.length < 200) this.#lines.push(line);
    for (const waiter of this.#waiters.splice(0)) waiter(line);
  }
}

function signalGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    // already gone
  }
}

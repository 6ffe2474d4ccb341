/**
 * The guest's watcher: the session helper run once as `helper --gurt-watch` (session_helper.c's
 * watch_main), told the process group of every exec the helper starts. It holds a pidfd of the
 * guest, and when the guest dies, however it dies (SIGKILL included), or closes the watcher's
 * stdin, it sends SIGKILL to every group it holds: an exec never outlives its guest, nor runs on
 * past its time limit because the guest that kept the time is gone. It costs an exec one line
 * written to a pipe; the watcher lets a group go once nothing of it is left. Every exec's
 * environment carries the guest's mark (GURT_GUEST_EXEC, random for each guest), and the watcher
 * kills every process whose environment holds it too, so a process an exec moved out of its group
 * (setsid) dies with the guest unless it also cleared its environment.
 */

/** The running watcher: tell it each exec's group, and close it when the guest stops. */
export class GroupWatcher {
  /** The variable and value every exec's environment carries. */
  static readonly MARK = "GURT_GUEST_EXEC";
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly encoder = new TextEncoder();
  private closed = false;

  private constructor(private readonly child: Deno.ChildProcess, readonly mark: string) {
    this.writer = child.stdin.getWriter();
    // The watcher never keeps the guest from exiting: its death is what the watcher waits for.
    child.unref();
  }

  /** Starts the watcher from the session helper; null where it cannot start. */
  static start(helper: string): GroupWatcher | null {
    const mark = crypto.randomUUID().replaceAll("-", "");
    try {
      const child = new Deno.Command(helper, {
        args: ["--gurt-watch"],
        clearEnv: true,
        env: { [GroupWatcher.MARK]: mark },
        cwd: "/",
        stdin: "piped",
        stdout: "null",
        stderr: "null",
      }).spawn();
      return new GroupWatcher(child, mark);
    } catch {
      return null;
    }
  }

  /** Holds an exec's process group (its leader's pid) until the group is gone. */
  watch(pgid: number): void {
    if (this.closed) return;
    this.writer.write(this.encoder.encode(`${pgid}\n`)).catch(() => {
      // The watcher is gone: the execs are no longer tied to the guest, but still run.
    });
  }

  /**
   * Closes the watcher's stdin, which sends SIGKILL to every group it still holds (what the
   * guest's shutdown leaves of its execs), and waits for it to exit.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.close().catch(() => {});
    await this.child.status;
  }
}

/**
 * The task's files on disk before a step says they are (seed 000: a step the log calls done is on
 * disk when the power goes). A task writes only to its home, so one syncfs(2) of the home's file
 * system covers every file its worker wrote, whatever their number, without the core opening one
 * of them: `sync --file-system` (coreutils) is that one system call. Deno has no syncfs, and
 * calling libc's through Deno.dlopen would give the core --allow-ffi, native code in the role
 * that holds the vault; fsyncing each file would mean opening what a task made (a FIFO blocks
 * the open, a tree of a million files takes minutes), and misses the folders' entries.
 *
 * Steps that arrive while a sync runs share the next one: a sync started before a step came may
 * have missed what was written just before it.
 */

/** syncfs(2) on the file system that holds `path`, through coreutils' `sync -f`. */
export async function syncFileSystem(path: string): Promise<void> {
  const out = await new Deno.Command(SYNC, {
    args: ["--file-system", "--", path],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    const said = new TextDecoder().decode(out.stderr).trim();
    throw new Error(`sync --file-system ${path} failed: ${said || `status ${out.code}`}`);
  }
}

/** coreutils' sync, where Debian puts it. */
const SYNC = "/usr/bin/sync";

/** One task home's syncs, one at a time, callers that arrive during one sharing the next. */
export class HomeSync {
  #running: Promise<void> | null = null;
  #queued: Promise<void> | null = null;

  constructor(
    readonly home: string,
    readonly syncFs: (path: string) => Promise<void> = syncFileSystem,
  ) {}

  /** Resolves once a sync that started after this call has ended. */
  sync(): Promise<void> {
    if (this.#running === null) return this.#start();
    this.#queued ??= this.#running.catch(() => {}).then(() => {
      this.#queued = null;
      return this.#start();
    });
    return this.#queued;
  }

  #start(): Promise<void> {
    const run: Promise<void> = this.syncFs(this.home).finally(() => {
      if (this.#running === run) this.#running = null;
    });
    this.#running = run;
    return run;
  }
}

/**
 * Says at once when the grant files are invalid (runbook.md#grants-invalid): the core loads them
 * at its start and again whenever a file of the grants directory changes, and prints each problem
 * on its own line, then once more when they are valid again. Calls are still decided by reading
 * the files at every decision; this only makes a mistyped file loud before a task meets it.
 */
import { type GrantLoad, type GrantsInvalidReporter, loadGrants } from "../policy/mod.ts";

/** What the watch reads and where it speaks. */
export interface GrantsWatchDeps {
  home: string;
  /** The tools grants may name now (the built-in ones and the apps'). */
  appTools: () => ReadonlySet<string>;
  /** Shared with the decisions, so that one set of problems is said once. */
  reporter: GrantsInvalidReporter;
  log: (line: string) => void;
}

/** How long after a change the files are read: an editor's save is several events. */
const SETTLE_MS = 100;

/** Watches the grants directory until close. */
export class GrantsWatch {
  readonly #deps: GrantsWatchDeps;
  #watcher: Deno.FsWatcher | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #invalid = false;
  #checking: Promise<void> = Promise.resolve();

  private constructor(deps: GrantsWatchDeps) {
    this.#deps = deps;
  }

  /** Checks the grants now, says what is wrong, and starts watching the directory. */
  static async start(deps: GrantsWatchDeps): Promise<GrantsWatch> {
    const watch = new GrantsWatch(deps);
    await watch.#check();
    try {
      watch.#watcher = Deno.watchFs(`${deps.home}/grants`, { recursive: false });
      void watch.#follow(watch.#watcher);
    } catch (error) {
      deps.log(
        `gurt serve: the grants directory cannot be watched (${(error as Error).message}); ` +
          "a problem in it is said at the next call; see runbook.md#grants-invalid",
      );
    }
    return watch;
  }

  /** Stops watching. */
  async close(): Promise<void> {
    clearTimeout(this.#timer);
    this.#watcher?.close();
    this.#watcher = null;
    await this.#checking;
  }

  async #follow(watcher: Deno.FsWatcher): Promise<void> {
    try {
      for await (const _event of watcher) {
        clearTimeout(this.#timer);
        this.#timer = setTimeout(() => {
          this.#checking = this.#checking.then(() => this.#check());
        }, SETTLE_MS);
      }
    } catch {
      // The watcher was closed, or the directory went away: a decision still reads the files.
    }
  }

  async #check(): Promise<void> {
    const { home, appTools, reporter, log } = this.#deps;
    let load: GrantLoad;
    try {
      load = await loadGrants(`${home}/grants`, { appTools: appTools() });
    } catch (error) {
      log(`gurt serve: the grants could not be checked: ${(error as Error).message}`);
      return;
    }
    const report = reporter.next(load);
    if (report !== null) { for (const line of report.split("\n")) log(line); }
    if (load.ok && this.#invalid) {
      log("grants: the grant files are valid again; calls are decided by them");
    }
    this.#invalid = !load.ok;
  }
}

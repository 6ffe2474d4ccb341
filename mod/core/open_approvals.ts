/**
 * The approvals open when `gurt serve` stopped, which the restart closes: the table of pending
 * approvals lives in memory, so a stop (or a crash) drops every one, and their tasks ask again.
 * The core keeps the list of open approvals in `run/approvals-open.json` as it changes, and the
 * next start reads it, says how many were closed, and removes it.
 */
import type { PendingApproval } from "../broker/mod.ts";
import { writeFileAtomic } from "../common/mod.ts";

/** An approval that was open: its id and its task. */
interface OpenApproval {
  approval: number;
  task: string;
}

/** The file's path in `home`. */
function openPath(home: string): string {
  return `${home}/run/approvals-open.json`;
}

/**
 * What the last core left open, as the start's notice (null when nothing was), and the file
 * removed. A file that cannot be read says so rather than stop the start.
 */
export async function closedAtStart(home: string): Promise<string | null> {
  const path = openPath(home);
  let open: OpenApproval[];
  try {
    open = JSON.parse(await Deno.readTextFile(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    await Deno.remove(path).catch(() => {});
    return `gurt serve: ${path} could not be read (${
      (error as Error).message
    }); approvals open before the restart, if any, were closed; see runbook.md#approvals-closed-at-restart`;
  }
  await Deno.remove(path);
  if (!Array.isArray(open) || open.length === 0) return null;
  const byTask = new Map<string, number>();
  for (const one of open) byTask.set(one.task, (byTask.get(one.task) ?? 0) + 1);
  const tasks = [...byTask].map(([task, count]) => `${task}: ${count}`).join(", ");
  return `gurt serve: the restart closed ${open.length} approval${
    open.length === 1 ? "" : "s"
  } left open when gurt serve stopped (${tasks}); their tasks ask again; see runbook.md#approvals-closed-at-restart`;
}

/**
 * Keeps `run/approvals-open.json` the list of open approvals: each change writes it (writes that
 * come while one is under way are folded into the next). `stop` writes the last list and keeps it
 * for the next start, before the core withdraws them at its close.
 */
export class OpenApprovals {
  #list: OpenApproval[] = [];
  #dirty = false;
  #writing: Promise<void> | null = null;
  #stopped = false;

  constructor(
    readonly home: string,
    readonly log: (line: string) => void,
  ) {}

  /** Notes the approvals open now. */
  note(open: PendingApproval[]): void {
    if (this.#stopped) return;
    this.#list = open.map((one) => ({ approval: one.approval, task: one.task }));
    this.#dirty = true;
    this.#writing ??= this.#write();
  }

  /** Writes what is pending and stops noting changes. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#writing;
  }

  async #write(): Promise<void> {
    while (this.#dirty) {
      this.#dirty = false;
      const list = this.#list;
      try {
        if (list.length === 0) await Deno.remove(openPath(this.home)).catch(() => {});
        else await writeFileAtomic(openPath(this.home), JSON.stringify(list));
      } catch (error) {
        this.log(`gurt serve: the list of open approvals could not be written: ${error}`);
      }
    }
    this.#writing = null;
  }
}

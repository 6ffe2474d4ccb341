/**
 * Following a task's journal for `gurt task watch`: `GET /tasks/:id/journal?after=N&wait=MS`
 * answers the lines after the first N at once, or waits up to MS for the next one (a long poll).
 * `ended` says the task has ended and no line will follow.
 */
import { type JournalLine, readTask } from "../broker/mod.ts";
import { HttpError } from "../common/mod.ts";
import { taskDir } from "../config/mod.ts";
import type { TaskManager } from "./task_manager.ts";

/** What one poll answers. */
export interface JournalPage {
  lines: JournalLine[];
  /** The `after` to ask with next. */
  next: number;
  state: string;
  ended: boolean;
}

/** How long a poll on a task that is ending waits before it answers (and is asked again). */
const ENDING_RETRY_MS = 50;

/** The longest a poll waits for a line. */
export const MAX_WAIT_MS = 60_000;

/** Answers one poll of task `id`'s journal: the lines after `after`, waiting up to `waitMs`. */
export async function followJournal(
  tasks: TaskManager,
  poll: { id: string; after: number; waitMs: number },
): Promise<JournalPage> {
  const { id } = poll;
  if (!/^[a-z0-9]{1,24}$/.test(id)) {
    throw new HttpError(400, `${JSON.stringify(id)} is not a task id`);
  }
  const path = `${taskDir(tasks.deps.home, id)}/journal.jsonl`;
  const handle = tasks.handle(id);
  if (handle === undefined) {
    let state: string;
    try {
      state = (await readTask(tasks.deps.home, id)).state;
    } catch {
      throw new HttpError(404, `no task ${id}`);
    }
    if (state === "running" || state === "waiting") {
      // Not live here but live on disk: the task is ending and its final state is being written
      // (or the core is closing). Answer nothing new shortly, and let the follower ask again.
      await new Promise((resolve) => setTimeout(resolve, ENDING_RETRY_MS));
      return page(await readLines(path), poll.after, state, false);
    }
    return page(await readLines(path), poll.after, state, true);
  }
  const changed = handle.journal.appended();
  let lines = await readLines(path);
  if (lines.length <= poll.after && poll.waitMs > 0) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.min(poll.waitMs, MAX_WAIT_MS));
    });
    await Promise.race([changed, handle.ended.promise, timeout]);
    clearTimeout(timer);
    lines = await readLines(path);
  }
  const live = tasks.handle(id) !== undefined;
  // An ending task leaves the live set before its final state is written: wait for that.
  if (!live) await handle.ended.promise;
  return page(lines, poll.after, handle.record.state, !live);
}

function page(lines: JournalLine[], after: number, state: string, ended: boolean): JournalPage {
  const from = Math.min(Math.max(0, after), lines.length);
  return { lines: lines.slice(from), next: lines.length, state, ended };
}

/** The journal's complete lines; a torn last line (no newline yet) is left for the next poll. */
async function readLines(path: string): Promise<JournalLine[]> {
  let text = "";
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const complete = text.slice(0, text.lastIndexOf("\n") + 1);
  const out: JournalLine[] = [];
  for (const raw of complete.split("\n")) {
    if (raw === "") continue;
    try {
      out.push(JSON.parse(raw));
    } catch {
      out.push({ type: "event", time: "", event: "unreadable", detail: null });
    }
  }
  return out;
}

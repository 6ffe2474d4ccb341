/**
 * After a crash, before the audit log goes on: a call's tool.result line and its Result record are
 * synced together, so the line can be on disk while the record is not. Such a line names a Result
 * seq the log never reached; `gurt serve` voids it (a tool.unrecorded line, synced) in every live
 * task's journal before the writer writes anything, so that seq, when a later record takes it,
 * is never mistaken for the call's. The call is then decided afresh when its key is asked again,
 * as after a crash before its line was written: no answer goes out without its Result record.
 */
import { Journal } from "./journal.ts";
import { isLive, readTask, taskDir } from "./task_store.ts";

/**
 * Voids the answers of live tasks whose Result record is `firstSeq` or later (the first seq the
 * writer will write: nothing from there on reached the log). Returns a notice for each.
 */
export async function voidUnrecordedResults(
  home: string,
  firstSeq: number,
  clock: () => Date = () => new Date(),
): Promise<string[]> {
  const notices: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(`${home}/tasks`));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return notices;
    throw error;
  }
  for (const entry of entries) {
    if (!entry.isDirectory) continue;
    const live = await readTask(home, entry.name).then((task) => isLive(task.state), () => false);
    if (!live) continue; // an unreadable task is left alone, as restore leaves it
    const journal = await Journal.open(`${taskDir(home, entry.name)}/journal.jsonl`);
    try {
      const unrecorded = [...journal.state.recorded].filter(([, { result }]) => result >= firstSeq);
      for (const [key, { result }] of unrecorded) {
        await journal.append({
          type: "tool.unrecorded",
          time: clock().toISOString(),
          key,
          result,
        });
        notices.push(
          `gurt: task ${entry.name}: a call's answer is void, as its Result record (seq ${result}) ` +
            "never reached the audit log; the call is decided again when it is asked again; " +
            "see runbook.md#result-unrecorded",
        );
      }
    } finally {
      journal.close();
    }
  }
  return notices;
}

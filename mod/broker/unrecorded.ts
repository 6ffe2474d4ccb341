/**
 * After a crash, before the audit log goes on: a call's tool.result line and its Result record are
 * synced together, so the line can be on disk while the record is not. Such a line names a Result
 * seq the log never reached; `gurt serve` voids it (a tool.unrecorded line, synced) in every live
 * task's journal before the writer writes anything, so that seq, when a later record takes it,
 * is never mistaken for the call's. The call is then decided afresh when its key is asked again,
 * as after a crash before its line was written: no answer goes out without its Result record.
 *
 * Each live journal is also synced: a core killed before its journal's fdatasync returned leaves
 * lines in the page cache that the restarted core would answer from, and a power cut would then
 * take back an answer that was given.
 */
import { taskDir } from "../config/mod.ts";
import { syncFile } from "../common/mod.ts";
import { Journal } from "./journal.ts";
import { isLive, readTasks } from "./task_store.ts";

/**
 * Voids the answers of live tasks whose Result record is `lostFrom` or later (the audit writer's
 * beforeWrite: nothing from there on is whole on disk), and syncs each live task's journal
 * (`sync`, an fdatasync of the file by default). Returns a notice for each answer voided.
 */
export async function recoverTaskJournals(
  home: string,
  options: { lostFrom: number; clock?: () => Date; sync?: (path: string) => Promise<void> },
): Promise<string[]> {
  const { lostFrom } = options;
  const clock = options.clock ?? (() => new Date());
  const sync = options.sync ?? syncFile;
  const notices: string[] = [];
  for (const { id, record } of await readTasks(home)) {
    // An unreadable task is left alone, as restore leaves it.
    if (record === null || !isLive(record.state)) continue;
    const path = `${taskDir(home, id)}/journal.jsonl`;
    await sync(path);
    const journal = await Journal.open(path);
    try {
      const unrecorded = [...journal.state.recorded].filter(([, { result }]) => result >= lostFrom);
      for (const [key, { result }] of unrecorded) {
        await journal.append({
          type: "tool.unrecorded",
          time: clock().toISOString(),
          key,
          result,
        });
        notices.push(
          `gurt: task ${id}: a call's answer is void, as its Result record (seq ${result}) ` +
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

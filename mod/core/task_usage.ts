/**
 * `GET /usage?since=DATE` (the owner's `gurt usage`): every task's model spend by model, summed
 * from the model.usage lines of the task journals (mod/broker/model_spend.ts), those from `since`
 * on when it is given. The journals are read as files: a live task's lines are synced before its
 * answer is given, and a torn last line is skipped as the journal's own reader skips it.
 */
import { addUsage, type ModelSpend, modelUsageLine, spendRows } from "../broker/mod.ts";
import { HttpError } from "../common/mod.ts";
import { taskDir } from "../config/mod.ts";

/** The `since` of a request: a date (`2026-12-01`, midnight UTC) or a time; null for all time. */
export function sinceOf(text: string | undefined): Date | null {
  if (text === undefined || text === "") return null;
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text) ? new Date(`${text}T00:00:00Z`) : new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(date.getTime())) {
    throw new HttpError(
      400,
      `since must be a date such as 2026-12-01 or a time such as 2026-12-01T09:30:00Z, not ${
        JSON.stringify(text.slice(0, 100))
      }`,
    );
  }
  return date;
}

/** Every task's spend by model since `since` (every answer when null), and how many tasks had any. */
export async function usageSince(
  home: string,
  since: Date | null,
): Promise<{ tasks: number; models: ModelSpend[] }> {
  const spend = new Map<string, ModelSpend>();
  let tasks = 0;
  let entries: Deno.DirEntry[] = [];
  try {
    entries = await Array.fromAsync(Deno.readDir(`${home}/tasks`));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  for (const entry of entries) {
    if (!entry.isDirectory || !/^[a-z0-9]{1,24}$/.test(entry.name)) continue;
    let text: string;
    try {
      text = await Deno.readTextFile(`${taskDir(home, entry.name)}/journal.jsonl`);
    } catch {
      continue;
    }
    let any = false;
    for (const raw of text.split("\n")) {
      // Only a usage line is parsed; the key's quotes are escaped inside any string a task wrote.
      if (!raw.includes('"type":"model.usage"')) continue;
      let line;
      try {
        line = modelUsageLine.parse(JSON.parse(raw));
      } catch {
        continue;
      }
      if (since !== null && !(Date.parse(line.time) >= since.getTime())) continue;
      addUsage(spend, line);
      any = true;
    }
    if (any) tasks++;
  }
  return { tasks, models: spendRows(spend) };
}

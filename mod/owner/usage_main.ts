/**
 * The CLI role's side of `gurt usage [--since DATE]` (run by task_main.ts, the role's entry for
 * `gurt task` and `gurt usage`): every task's model spend by model, over the admin socket, as a
 * table in dollars (spend_text.ts says the rounding).
 */
import { AdminClient } from "../admin/mod.ts";
import { spendTable } from "../owner-text/mod.ts";
import { printOwner } from "./owner_print.ts";

/** What the owner asked. */
export interface UsageArgs {
  socket: string;
  action: "usage";
  since?: string;
}

/** Prints the spend by model; exit status 1 when the core refused. */
export async function usageMain(args: UsageArgs): Promise<number> {
  const answer = await new AdminClient(args.socket).usage(args.since);
  if (!answer.ok) {
    console.error(`gurt usage: ${answer.error}`);
    return 1;
  }
  const { since, tasks, models } = answer.value;
  const from = since === null ? "all time" : `since ${since}`;
  printOwner(`model spend of ${tasks} task${tasks === 1 ? "" : "s"}, ${from}:`);
  for (const line of spendTable(models)) printOwner(`  ${line}`);
  return 0;
}

/** The CLI role's side of `gurt task …`: start, list, show and stop, over the admin socket. */
import {
  AdminClient,
  type JournalLineView,
  type ListedTask,
  type StartTaskInput,
} from "../admin/mod.ts";
import type { TaskShowAnswer, TaskView } from "../admin/mod.ts";
import {
  centsText,
  dollarsText,
  journalWords,
  shownText,
  spendTable,
  totalNanocents,
  workdirText,
} from "../owner-text/mod.ts";
import { printOwner } from "./owner_print.ts";
import { type UsageArgs, usageMain } from "./usage_main.ts";

/** What the owner asked. */
export type TaskArgs =
  | { socket: string; action: "start"; body: StartTaskInput }
  | { socket: string; action: "list" }
  | { socket: string; action: "show"; id: string }
  | { socket: string; action: "stop"; id: string }
  | UsageArgs;

/** Prints the answer; exit status 1 when the core refused. */
export default async function main(args: TaskArgs): Promise<number> {
  if (args.action === "usage") return await usageMain(args);
  const admin = new AdminClient(args.socket);
  const refused = (error: string) => {
    console.error(`gurt task ${args.action}: ${error}`);
    return 1;
  };
  if (args.action === "start") {
    const answer = await admin.startTask(args.body);
    if (!answer.ok) return refused(answer.error);
    const task = answer.value.task;
    printOwner(task.id);
    if (task.state === "failed") {
      console.error(`gurt task start: task ${task.id} failed: ${task.endReason}`);
      return 1;
    }
    return 0;
  }
  if (args.action === "list") {
    const answer = await admin.tasks();
    if (!answer.ok) return refused(answer.error);
    printList(answer.value.tasks);
    return 0;
  }
  if (args.action === "show") {
    const answer = await admin.task(args.id);
    if (!answer.ok) return refused(answer.error);
    printTask(answer.value);
    return 0;
  }
  const answer = await admin.stopTask(args.id);
  if (!answer.ok) return refused(answer.error);
  printOwner(`stopped ${answer.value.task.id}`);
  return 0;
}

function money(task: TaskView): string {
  const budget = task.budgetCents === null ? "no budget" : centsText(task.budgetCents);
  return `${centsText(task.spentCents)} of ${budget}`;
}

function printList(tasks: ListedTask[]): void {
  if (tasks.length === 0) printOwner("no tasks");
  for (const task of tasks) {
    const pending = task.pending.length > 0 ? `  pending ${task.pending.join(",")}` : "";
    const prompt = shownText(task.prompt, { max: 60 });
    // The exact model spend beside the whole cents charged.
    const models = `models ${dollarsText(totalNanocents(task.spend))}`;
    printOwner(`${task.id}  ${task.state}  ${money(task)}  ${models}${pending}  ${prompt}`);
  }
}

function printTask(body: TaskShowAnswer): void {
  const task = body.task;
  printOwner(
    `task ${shownText(task.id, { max: 100 })}: ${task.state}${
      task.endReason ? ` (${shownText(task.endReason)})` : ""
    }`,
  );
  printOwner(`  spent ${money(task)}`);
  printOwner("  spend by model:");
  for (const line of spendTable(task.spend)) printOwner(`    ${line}`);
  printOwner(`  tools ${task.tools.map((tool) => shownText(tool, { max: 200 })).join(", ")}`);
  const hosts = task.hosts.length === 0
    ? "none but gurt.toml's [egress] hosts"
    : task.hosts.join(", ");
  printOwner(`  hosts ${shownText(hosts)}`);
  for (const workdir of task.workdirs) printOwner(`  workdir ${workdirText(workdir)}`);
  printOwner(`  created ${task.created}${task.ended ? `, ended ${task.ended}` : ""}`);
  if (body.pending.length > 0) printOwner(`  pending approvals ${body.pending.join(", ")}`);
  if (task.prompt !== "") printOwner(`  prompt ${shownText(task.prompt)}`);
  printOwner("journal:");
  // A task may write lines without end: the newest are shown, and how many came before them.
  const earlier = Math.max(0, body.journal.length - SHOWN_JOURNAL_LINES);
  if (earlier > 0) {
    printOwner(
      `  (${earlier} earlier lines not shown; gurt task watch ${task.id} --json prints every line)`,
    );
  }
  for (const line of body.journal.slice(earlier)) printOwner(`  ${journalLine(line)}`);
}

/** How many of the journal's newest lines `gurt task show` prints. */
export const SHOWN_JOURNAL_LINES = 200;

function journalLine(line: JournalLineView): string {
  return `${shownText(String(line.time).slice(11, 19), { max: 8 })} ${journalWords(line)}`;
}

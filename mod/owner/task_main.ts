/** The CLI role's side of `gurt task …`: start, list, show and stop, over the admin socket. */
import {
  AdminClient,
  type JournalLineView,
  type ListedTask,
  type StartTaskInput,
} from "../admin/mod.ts";
import type { TaskShowAnswer, TaskView } from "../admin/mod.ts";
import { journalWords, shownText } from "../owner-text/mod.ts";

/** What the owner asked. */
export type TaskArgs =
  | { socket: string; action: "start"; body: StartTaskInput }
  | { socket: string; action: "list" }
  | { socket: string; action: "show"; id: string }
  | { socket: string; action: "stop"; id: string };

/** Prints the answer; exit status 1 when the core refused. */
export default async function main(args: TaskArgs): Promise<number> {
  const admin = new AdminClient(args.socket);
  const refused = (error: string) => {
    console.error(`gurt task ${args.action}: ${error}`);
    return 1;
  };
  if (args.action === "start") {
    const answer = await admin.startTask(args.body);
    if (!answer.ok) return refused(answer.error);
    const task = answer.value.task;
    console.log(task.id);
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
  console.log(`stopped ${answer.value.task.id}`);
  return 0;
}

function money(task: TaskView): string {
  const budget = task.budgetCents === null ? "no budget" : `${task.budgetCents}¢`;
  return `${task.spentCents}¢ of ${budget}`;
}

function printList(tasks: ListedTask[]): void {
  if (tasks.length === 0) console.log("no tasks");
  for (const task of tasks) {
    const pending = task.pending.length > 0 ? `  pending ${task.pending.join(",")}` : "";
    const prompt = shownText(task.prompt, { max: 60 });
    console.log(`${task.id}  ${task.state}  ${money(task)}${pending}  ${prompt}`);
  }
}

function printTask(body: TaskShowAnswer): void {
  const task = body.task;
  console.log(
    `task ${shownText(task.id, { max: 100 })}: ${task.state}${
      task.endReason ? ` (${shownText(task.endReason)})` : ""
    }`,
  );
  console.log(`  spent ${money(task)}`);
  console.log(`  tools ${task.tools.map((tool) => shownText(tool, { max: 200 })).join(", ")}`);
  const hosts = task.hosts.length === 0
    ? "none but gurt.toml's [egress] hosts"
    : task.hosts.join(", ");
  console.log(`  hosts ${shownText(hosts)}`);
  console.log(`  created ${task.created}${task.ended ? `, ended ${task.ended}` : ""}`);
  if (body.pending.length > 0) console.log(`  pending approvals ${body.pending.join(", ")}`);
  if (task.prompt !== "") console.log(`  prompt ${shownText(task.prompt)}`);
  console.log("journal:");
  for (const line of body.journal) console.log(`  ${journalLine(line)}`);
}

function journalLine(line: JournalLineView): string {
  return `${shownText(String(line.time).slice(11, 19), { max: 8 })} ${journalWords(line)}`;
}

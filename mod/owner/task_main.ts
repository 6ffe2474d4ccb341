/** The CLI role's side of `gurt task …`: start, list, show and stop, over the admin socket. */
import {
  AdminClient,
  type JournalLineView,
  type ListedTask,
  type StartTaskInput,
} from "../admin/mod.ts";
import type { TaskShowAnswer, TaskView } from "../admin/mod.ts";
import { escapeArguments, escapeModelText } from "../owner-text/mod.ts";

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
    const prompt = escapeArguments(task.prompt).slice(0, 60);
    console.log(`${task.id}  ${task.state}  ${money(task)}${pending}  ${prompt}`);
  }
}

function printTask(body: TaskShowAnswer): void {
  const task = body.task;
  console.log(`task ${task.id}: ${task.state}${task.endReason ? ` (${task.endReason})` : ""}`);
  console.log(`  spent ${money(task)}`);
  console.log(`  tools ${task.tools.join(", ")}`);
  const hosts = task.hosts.length === 0
    ? "none but gurt.toml's [egress] hosts"
    : task.hosts.join(", ");
  console.log(`  hosts ${escapeArguments(hosts)}`);
  console.log(`  created ${task.created}${task.ended ? `, ended ${task.ended}` : ""}`);
  if (body.pending.length > 0) console.log(`  pending approvals ${body.pending.join(", ")}`);
  if (task.prompt !== "") console.log(`  prompt ${escapeModelText(task.prompt)}`);
  console.log("journal:");
  for (const line of body.journal) console.log(`  ${journalLine(line)}`);
}

function journalLine(line: JournalLineView): string {
  const time = line.time.slice(11, 19);
  const json = (value: unknown) => escapeArguments(JSON.stringify(value));
  // A key and a tool name came from the task: escaped like its arguments.
  const key = escapeArguments(String(line.key));
  const tool = escapeArguments(String(line.tool));
  switch (line.type) {
    case "step":
      return `${time} step ${escapeModelText(String(line.text))}`;
    case "tool.call":
      return `${time} call ${key} ${tool} ${json(line.input)} (decision ${line.decision})`;
    case "tool.result":
      return `${time} result ${key} ${tool} ${json(line.answer)} cost ${line.cost}¢`;
    case "tool.unrecorded":
      return `${time} void ${key}: its Result record (seq ${line.result}) was never written`;
    case "ask":
      return `${time} ask ${key} approval ${line.approval}: ${
        escapeModelText(String(line.question))
      }`;
    case "ask.answer":
      return `${time} answer ${key}: ${line.approved ? "approved" : "not approved"}`;
    case "cost":
      return `${time} cost ${line.cents}¢ ${escapeArguments(String(line.what))}`;
    case "event":
      return `${time} ${eventText(String(line.event), detailOf(line.detail), json)}`;
    default:
      return `${time} ${json(line)}`;
  }
}

type Detail = Record<string, unknown>;

function detailOf(value: unknown): Detail | null {
  return typeof value === "object" && value !== null ? value as Detail : null;
}

/** A notice of the core's in the journal: the two it writes in words, any other as its JSON. */
function eventText(event: string, detail: Detail | null, json: (value: unknown) => string): string {
  const text = (value: unknown) => escapeArguments(String(value));
  if (event === "approval_pending" && detail !== null) {
    return `approval ${text(detail.approval)} pending: ${text(detail.tool)}, expires ${
      text(detail.expires)
    }`;
  }
  if (event === "tool_denied" && detail !== null) {
    return `denied ${text(detail.name)}: ${text(detail.reason)}`;
  }
  if (event === "net.blocked" && detail !== null) {
    return `blocked ${text(detail.host)}:${text(detail.port)} (${text(detail.reason)})`;
  }
  return `event ${text(event)} ${json(detail)}`;
}

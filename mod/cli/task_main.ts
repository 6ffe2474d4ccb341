/** The CLI role's side of `gurt task …`: start, list, show and stop, over the admin socket. */
import { admin, errorOf } from "./admin_client.ts";
import { escapeArguments, escapeModelText } from "../owner-text/mod.ts";

/** What the owner asked. */
export type TaskArgs =
  | { socket: string; action: "start"; body: Record<string, unknown> }
  | { socket: string; action: "list" }
  | { socket: string; action: "show"; id: string }
  | { socket: string; action: "stop"; id: string };

type Shown = Record<string, unknown>;

/** Prints the answer; exit status 1 when the core refused. */
export default async function main(args: TaskArgs): Promise<number> {
  const request = args.action === "start"
    ? { method: "POST" as const, path: "/tasks", body: args.body }
    : args.action === "list"
    ? { method: "GET" as const, path: "/tasks" }
    : args.action === "show"
    ? { method: "GET" as const, path: `/tasks/${encodeURIComponent(args.id)}` }
    : { method: "POST" as const, path: `/tasks/${encodeURIComponent(args.id)}/stop` };
  const answer = await admin(args.socket, request);
  if (answer.status !== 200) {
    console.error(`gurt task ${args.action}: ${errorOf(answer.body)}`);
    return 1;
  }
  if (args.action === "start") {
    const task = answer.body.task as Shown;
    console.log(task.id);
    if (task.state === "failed") {
      console.error(`gurt task start: task ${task.id} failed: ${task.endReason}`);
      return 1;
    }
  }
  if (args.action === "stop") console.log(`stopped ${(answer.body.task as Shown).id}`);
  if (args.action === "list") printList(answer.body.tasks as Shown[]);
  if (args.action === "show") printTask(answer.body);
  return 0;
}

function money(task: Shown): string {
  const budget = task.budgetCents === null ? "no budget" : `${task.budgetCents}¢`;
  return `${task.spentCents}¢ of ${budget}`;
}

function printList(tasks: Shown[]): void {
  if (tasks.length === 0) console.log("no tasks");
  for (const task of tasks) {
    const pending = (task.pending as number[]).length > 0
      ? `  pending ${(task.pending as number[]).join(",")}`
      : "";
    const prompt = escapeArguments(String(task.prompt)).slice(0, 60);
    console.log(`${task.id}  ${task.state}  ${money(task)}${pending}  ${prompt}`);
  }
}

function printTask(body: Shown): void {
  const task = body.task as Shown;
  console.log(`task ${task.id}: ${task.state}${task.endReason ? ` (${task.endReason})` : ""}`);
  console.log(`  spent ${money(task)}`);
  console.log(`  tools ${(task.tools as string[]).join(", ")}`);
  console.log(`  created ${task.created}${task.ended ? `, ended ${task.ended}` : ""}`);
  if ((body.pending as number[]).length > 0) {
    console.log(`  pending approvals ${(body.pending as number[]).join(", ")}`);
  }
  if (String(task.prompt) !== "") console.log(`  prompt ${escapeModelText(String(task.prompt))}`);
  console.log("journal:");
  for (const line of body.journal as Shown[]) console.log(`  ${journalLine(line)}`);
}

function journalLine(line: Shown): string {
  const time = String(line.time).slice(11, 19);
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
      return `${time} ${eventText(String(line.event), line.detail as Shown | null, json)}`;
    default:
      return `${time} ${json(line)}`;
  }
}

/** A notice of the core's in the journal: the two it writes in words, any other as its JSON. */
function eventText(event: string, detail: Shown | null, json: (value: unknown) => string): string {
  const text = (value: unknown) => escapeArguments(String(value));
  if (event === "approval_pending" && detail !== null) {
    return `approval ${text(detail.approval)} pending: ${text(detail.tool)}, expires ${
      text(detail.expires)
    }`;
  }
  if (event === "tool_denied" && detail !== null) {
    return `denied ${text(detail.name)}: ${text(detail.reason)}`;
  }
  return `event ${text(event)} ${json(detail)}`;
}

/**
 * What several pages say the same way: money in dollars and cents, a task's worker and spend, the
 * grant words (taint, result class) with a line of help pointing at docs/grants.md, an audit
 * record's fields as a table, and who answered an approval.
 */
// deno-lint-ignore-file jsx-key -- rendered on the server only: keys matter to a client
// reconciler, and Hono would print them as attributes.
import type { Child } from "hono/jsx";
import type { AuditRecordView, TaskView } from "../../admin/mod.ts";
import { centsText, shownText } from "../../owner-text/mod.ts";

/** A task's spend and budget, `$0.07 of $5.00` or `$0.07 (no budget)`. */
export function spendingText(task: Pick<TaskView, "spentCents" | "budgetCents">): string {
  const spent = centsText(task.spentCents);
  return task.budgetCents === null
    ? `${spent} (no budget)`
    : `${spent} of ${centsText(task.budgetCents)}`;
}

/** The worker of a task by name: claude, codex, droid, opencode, loop, cmd, none or test. */
export function workerName(worker: TaskView["worker"]): string {
  const agent = (worker as { agent?: unknown }).agent;
  const name = worker.kind === "agent" && typeof agent === "string" ? agent : worker.kind;
  return shownText(name, { max: 40 });
}

/** The first line of a task's prompt, as data (`(no prompt)` for an empty one). */
export function promptLine(prompt: string): string {
  const first = prompt.split(/\r?\n/, 1)[0] ?? "";
  if (first.trim() === "") return "(no prompt)";
  const more = prompt.length > first.length && prompt.slice(first.length).trim() !== "";
  return shownText(first, { max: 200 }) + (more ? " …" : "");
}

/** What the grant words mean, one sentence each, and the heading of docs/grants.md they point to. */
const HELP = {
  taint: {
    text: "the most sensitive kind of data the task has read so far (public, private, secret); " +
      "it only ever rises, and a grant applies only while it is at or below the grant's max taint",
    anchor: "taint",
  },
  grant: {
    text: "max taint: the grant applies only while the task's taint is at or below it; result: " +
      "how sensitive the call's answer is, the task's taint rises to it",
    anchor: "fields",
  },
} as const;

/** A line of help beside a grant word, with its title on the word, naming where the docs say more. */
export function Help(props: { topic: keyof typeof HELP; children?: Child }): Child {
  const help = HELP[props.topic];
  return (
    <span class="help-term" title={help.text}>
      {props.children}
      <small class="help">
        {`${help.text} (docs/grants.md#${help.anchor})`}
      </small>
    </span>
  );
}

/** Who answered an approval, from its Approval record's `answer` and `by`. */
export function answererText(answer: unknown, by: unknown): string {
  if (answer === "expired") return "nobody: it expired";
  if (by === null || by === undefined) return "not recorded";
  const who = String(by);
  if (who === "restart") return "the core, restoring it at a restart";
  if (who === "gurt approve" || who === "gurt refuse") return `the owner, with ${who}`;
  if (who === "task ended") return "the core: the task ended";
  return shownText(who, { max: 200 });
}

/** One field's value as text: text as data, anything else as compact JSON. */
function fieldText(value: unknown): string {
  if (typeof value === "string") return shownText(value, { max: 2000 });
  return shownText(JSON.stringify(value) ?? "undefined", { max: 2000 });
}

/** An answered approval in words: `approval 10: approved by the owner, in the portal`. */
export function answeredText(event: Record<string, unknown>): string {
  const id = shownText(String(event.decision), { max: 20 });
  if (event.answer === "expired") return `approval ${id}: expired, nobody answered in time`;
  const answer = shownText(String(event.answer), { max: 20 });
  return `approval ${id}: ${answer} by ${answererText(event.answer, event.by)}`;
}

/** An audit record's event as a table of its fields (an Approval record also says who answered). */
export function EventFields(props: { record: AuditRecordView }): Child {
  const event = props.record.event as Record<string, unknown>;
  const rows: [string, string][] = Object.entries(event)
    .filter(([name]) => name !== "type")
    .map(([name, value]) => [shownText(name, { max: 80 }), fieldText(value)]);
  if (event.type === "approval") {
    rows.unshift(["answered by", answererText(event.answer, event.by)]);
  }
  return (
    <dl class="fields">
      {rows.flatMap(([name, value]) => [
        <dt>{name}</dt>,
        <dd>
          <code>{value}</code>
        </dd>,
      ])}
    </dl>
  );
}

/** The columns and cells of a table of audit records: seq, time, type, fields. */
export const RECORD_COLUMNS = ["Seq", "Time", "Record", "Fields"];

/** One record's cells, in RECORD_COLUMNS' order. */
export function recordCells(record: AuditRecordView): Child[] {
  return [
    String(record.seq),
    <time datetime={record.time}>{record.time}</time>,
    <code>{shownText(record.event.type, { max: 80 })}</code>,
    <EventFields record={record} />,
  ];
}

/** The Tasks pages: the list with state and spending, one task's journal and audit records. */
// deno-lint-ignore-file jsx-key -- rendered on the server only: keys matter to a client
// reconciler, and Hono would print them as attributes.
import type { Child } from "hono/jsx";
import type { AuditRecordView, JournalLineView, ListedTask, TaskView } from "../../admin/mod.ts";
import { journalWords, shownLines, shownText } from "../../owner-text/mod.ts";
import { DataTable } from "./data_table.tsx";
import { Csrf, Layout, Notice } from "./layout.tsx";

/** A task as the page shows it: the admin socket's view, with its pending approvals. */
export type TaskShown = TaskView & { pending: number[] };

function spending(task: TaskView): string {
  const spent = `${task.spentCents}¢`;
  return task.budgetCents === null ? `${spent} (no budget)` : `${spent} of ${task.budgetCents}¢`;
}

function live(task: TaskView): boolean {
  return task.state === "running" || task.state === "waiting";
}

/** The list of tasks and the form that starts one. */
export function TasksPage(
  props: { tasks: ListedTask[]; csrf: string; notice: string | null; error: string | null },
): Child {
  return (
    <Layout title="Tasks" current="/tasks" csrf={props.csrf}>
      <Notice text={props.notice} />
      <Notice text={props.error} error />
      {props.tasks.length === 0 ? <p>No task has run on this box yet.</p> : (
        <DataTable
          columns={["Task", "State", "Spent", "Waiting", "Started"]}
          rows={props.tasks.map((task) => [
            <a href={`/tasks/${encodeURIComponent(task.id)}`}>
              {shownText(task.id)}
            </a>,
            task.state,
            spending(task),
            String(task.pending.length),
            <time datetime={task.created}>{task.created}</time>,
          ])}
        />
      )}
      <section aria-labelledby="start-heading">
        <h2 id="start-heading">Start a task</h2>
        <form method="post" action="/tasks" class="card">
          <Csrf token={props.csrf} />
          <label>
            Prompt
            <textarea name="prompt" rows={3} cols={60}></textarea>
          </label>
          <label>
            Tools (separated by spaces or commas)
            <input type="text" name="tools" value="example.echo" size={40} />
          </label>
          <label>
            Budget in cents (empty for none)
            <input type="number" name="budget" min={0} step={1} inputmode="numeric" />
          </label>
          <label>
            Worker
            <select name="worker">
              <option value="none">none (a worker connects to the task socket itself)</option>
              <option value="cmd">a command</option>
            </select>
          </label>
          <label>
            Command, one argument a line (for a command worker)
            <textarea name="command" rows={2} cols={60}></textarea>
          </label>
          <p>
            <button type="submit">Start the task</button>
          </p>
        </form>
      </section>
    </Layout>
  );
}

/** One task: its fields, the Stop form, its journal and its audit records. */
export function TaskPage(
  props: {
    task: TaskShown;
    journal: JournalLineView[];
    records: AuditRecordView[];
    csrf: string;
    notice: string | null;
  },
): Child {
  const task = props.task;
  return (
    <Layout title={`Task ${shownText(task.id)}`} current="/tasks" csrf={props.csrf}>
      <Notice text={props.notice} />
      <dl>
        <dt>State</dt>
        <dd>{task.state + (task.endReason ? ` (${shownText(task.endReason)})` : "")}</dd>
        <dt>Spent</dt>
        <dd>{spending(task)}</dd>
        <dt>Tools</dt>
        <dd>{task.tools.map((tool) => shownText(tool)).join(", ")}</dd>
        <dt>Hosts</dt>
        <dd>
          {task.hosts.length === 0
            ? "none but gurt.toml's [egress] hosts"
            : task.hosts.map((host) => shownText(host)).join(", ")}
        </dd>
        <dt>Worker</dt>
        <dd>{task.worker.kind}</dd>
        <dt>Started</dt>
        <dd>{task.created}</dd>
        {task.ended
          ? (
            <>
              <dt>Ended</dt>
              <dd>{task.ended}</dd>
            </>
          )
          : null}
        <dt>Waiting approvals</dt>
        <dd>
          {task.pending.length === 0 ? "none" : <a href="/approvals">{task.pending.join(", ")}</a>}
        </dd>
        <dt>Prompt</dt>
        <dd>
          <pre class="data">{shownLines(task.prompt).join("\n")}</pre>
        </dd>
      </dl>
      {live(task)
        ? (
          <form method="post" action={`/tasks/${encodeURIComponent(task.id)}/stop`} class="actions">
            <Csrf token={props.csrf} />
            <label>
              {"Reason (optional) "}
              <input type="text" name="reason" maxlength={2000} />
            </label>
            <button type="submit" class="danger">Stop the task</button>
          </form>
        )
        : null}
      <h2>Journal</h2>
      {props.journal.length === 0 ? <p>The journal is empty.</p> : (
        <ol class="journal">
          {props.journal.map((line) => (
            <li>
              <time datetime={shownText(String(line.time), { max: 40 })}>
                {shownText(String(line.time), { max: 40 })}
              </time>
              <pre class="data">{journalWords(line)}</pre>
            </li>
          ))}
        </ol>
      )}
      <h2>Audit records</h2>
      {props.records.length === 0 ? <p>No audit record names this task.</p> : (
        <DataTable
          columns={["Seq", "Time", "Event"]}
          rows={props.records.map((record) => [
            String(record.seq),
            record.time,
            <code>{shownText(JSON.stringify(record.event))}</code>,
          ])}
        />
      )}
    </Layout>
  );
}

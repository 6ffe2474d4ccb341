/** The Tasks pages: the list with state and spending, one task's journal and audit records. */
// deno-lint-ignore-file jsx-key -- rendered on the server only: keys matter to a client
// reconciler, and Hono would print them as attributes.
import type { Child } from "hono/jsx";
import type {
  AuditRecordView,
  JournalLineView,
  ListedTask,
  PendingApprovalView,
  TaskView,
} from "../../admin/mod.ts";
import {
  centsText,
  journalWords,
  shownLines,
  shownText,
  workdirText,
} from "../../owner-text/mod.ts";
import { DataTable } from "./data_table.tsx";
import { SpendTable } from "./spend_table.tsx";
import { Csrf, Layout, Notice } from "./layout.tsx";
import {
  answeredText,
  RECORD_COLUMNS,
  recordCells,
  spendingText as spending,
  workerName,
} from "./owner_words.tsx";

/** A task as the page shows it: the admin socket's view, with its pending approvals. */
export type TaskShown = TaskView & { pending: number[] };

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
            Budget in cents, 500 for $5.00 (empty for none)
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

/** How many journal lines one task page shows; the links go to the pages before and after. */
export const JOURNAL_PAGE_SIZE = 200;

/** The journal lines one task page shows: from line `first` (0-based), of `total`. */
export interface JournalShown {
  lines: JournalLineView[];
  first: number;
  total: number;
}

/**
 * The page of `journal` that starts at `from` (the query's, as typed), or its newest page: a task
 * that writes a million steps does not make a page of a million lines.
 */
export function journalShown(journal: JournalLineView[], from: string | undefined): JournalShown {
  const total = journal.length;
  const newest = Math.max(0, total - JOURNAL_PAGE_SIZE);
  const asked = from !== undefined && /^\d{1,9}$/.test(from) ? Number(from) : newest;
  const first = Math.min(asked, newest);
  return { lines: journal.slice(first, first + JOURNAL_PAGE_SIZE), first, total };
}

/** What one task page shows: the task, a page of its journal, its records and approvals. */
export interface TaskPageView {
  task: TaskShown;
  journal: JournalShown;
  records: AuditRecordView[];
  /** Its pending approvals, as the Approvals page has them. */
  approvals: PendingApprovalView[];
  /** The Approval records of its answered approvals, oldest first. */
  answered: AuditRecordView[];
}

/**
 * One task: its fields, the Stop form, and the part that changes (TaskLive): its state, spend and
 * waiting approvals, a page of its journal and its audit records (the newest 500, as the core's
 * index keeps them). The script keeps that part live; without it the page is as of its loading.
 */
export function TaskPage(
  props: { view: TaskPageView; csrf: string; notice: string | null },
): Child {
  const task = props.view.task;
  return (
    <Layout title={`Task ${shownText(task.id)}`} current="/tasks" csrf={props.csrf}>
      <Notice text={props.notice} />
      <dl>
        <dt>Tools</dt>
        <dd>{task.tools.map((tool) => shownText(tool)).join(", ")}</dd>
        <dt>Hosts</dt>
        <dd>
          {task.hosts.length === 0
            ? "none but gurt.toml's [egress] hosts"
            : task.hosts.map((host) => shownText(host)).join(", ")}
        </dd>
        <dt>Workdirs</dt>
        <dd class="workdirs">
          {task.workdirs.length === 0 ? "none" : task.workdirs.map(workdirText).join("; ")}
        </dd>
        <dt>Worker</dt>
        <dd>{workerName(task.worker)}</dd>
        <dt>Started</dt>
        <dd>{task.created}</dd>
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
      <TaskLive view={props.view} />
    </Layout>
  );
}

/** The part of a task page that changes, which the live view replaces with a fresh rendering. */
export function TaskLive(props: { view: TaskPageView }): Child {
  const { task, journal, records, approvals, answered } = props.view;
  const path = `/tasks/${encodeURIComponent(task.id)}`;
  return (
    <section id="task-live" aria-label="What the task is doing">
      <dl>
        <dt>State</dt>
        <dd id="task-state" aria-live="polite">
          {task.state + (task.endReason ? ` (${shownText(task.endReason)})` : "")}
        </dd>
        <dt>Spent</dt>
        <dd id="task-spent">{spending(task)}</dd>
        {task.ended
          ? (
            <>
              <dt>Ended</dt>
              <dd>{task.ended}</dd>
            </>
          )
          : null}
        <dt>Waiting approvals</dt>
        <dd id="task-waiting">
          <WaitingList pending={task.pending} approvals={approvals} task={task.id} />
        </dd>
        <dt>Answered approvals</dt>
        <dd id="task-answered">
          {answered.length === 0 ? "none" : (
            <ul class="waiting">
              {answered.map((record) => <li>{answeredText(record.event)}</li>)}
            </ul>
          )}
        </dd>
      </dl>
      <h2>Spend by model</h2>
      <SpendTable rows={task.spend} />
      <h2>Journal</h2>
      {journal.total === 0 ? <p>The journal is empty.</p> : (
        <p>
          {`Lines ${journal.first + 1} to ${
            journal.first + journal.lines.length
          } of ${journal.total}`}
        </p>
      )}
      <JournalLinks journal={journal} path={path} />
      {journal.lines.length === 0 ? null : (
        <ol class="journal" start={journal.first + 1}>
          {journal.lines.map((line) => (
            <li>
              <time datetime={shownText(String(line.time), { max: 40 })}>
                {shownText(String(line.time), { max: 40 })}
              </time>
              <pre class="data">{journalWords(line)}</pre>
            </li>
          ))}
        </ol>
      )}
      <JournalLinks journal={journal} path={path} />
      <h2>Audit records</h2>
      {records.length === 0
        ? <p>No audit record names this task.</p>
        : <DataTable columns={RECORD_COLUMNS} rows={records.map(recordCells)} />}
    </section>
  );
}

/** The task's waiting approvals: each one's number, tool and cost, and where to answer them. */
function WaitingList(
  props: { pending: number[]; approvals: PendingApprovalView[]; task: string },
): Child {
  if (props.pending.length === 0) return "none";
  const byId = new Map(props.approvals.map((item) => [item.approval, item]));
  return (
    <ul class="waiting">
      {props.pending.map((id) => {
        const item = byId.get(id);
        const what = item === undefined
          ? ""
          : `: ${shownText(item.tool, { max: 200 })}${
            item.costCents === null ? "" : `, ${centsText(item.costCents)}`
          }`;
        return (
          <li>
            <a href={`/approvals?task=${encodeURIComponent(props.task)}#approval-${id}`}>
              {`approval ${id}`}
            </a>
            {what}
          </li>
        );
      })}
    </ul>
  );
}

/** Links to the journal's pages before and after the one shown, when there are. */
function JournalLinks(props: { journal: JournalShown; path: string }): Child {
  const { first, lines, total } = props.journal;
  const links: Child[] = [];
  if (first > 0) {
    const earlier = Math.max(0, first - JOURNAL_PAGE_SIZE);
    links.push(<a href={`${props.path}?from=${earlier}`} rel="prev">Earlier lines</a>);
  }
  if (first + lines.length < total) {
    links.push(<a href={`${props.path}?from=${first + lines.length}`} rel="next">Later lines</a>);
    links.push(<a href={props.path}>The newest lines</a>);
  }
  if (links.length === 0) return null;
  return <nav aria-label="Journal pages" class="actions">{links}</nav>;
}

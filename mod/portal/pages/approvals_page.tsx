/**
 * The Approvals page: each pending approval as `gurt approvals` shows it, with Approve and Refuse,
 * a bounded page of them at a time.
 */
// deno-lint-ignore-file jsx-key -- rendered on the server only: keys matter to a client
// reconciler, and Hono would print them as attributes.
import type { Child } from "hono/jsx";
import type { ListedTask, PendingApprovalView } from "../../admin/mod.ts";
import { approvalBlock, ARGUMENTS_MAX, centsText, shownText } from "../../owner-text/mod.ts";
import { type ApprovalGroup, type ApprovalsView, pageLink } from "../approvals_paging.ts";
import { Csrf, Layout, Notice } from "./layout.tsx";
import { Help, promptLine, spendingText, workerName } from "./owner_words.tsx";

/** The tasks the cards name, by id: who asked, and why (its prompt, worker and spend). */
export type TaskBriefs = ReadonlyMap<string, ListedTask>;

/**
 * One page of the pending approvals (approvals_paging.ts): each task's cards, and after them a note
 * of how many more it has, with the link to its own pages. The live view brings this element in
 * line with a fresh rendering of the same page.
 */
export function ApprovalsList(
  props: { view: ApprovalsView; tasks: TaskBriefs; now: Date; csrf: string },
): Child {
  const view = props.view;
  const heading = view.total === 0
    ? "Nothing is waiting for you"
    : view.task === null
    ? `${view.total} waiting for your answer`
    : `${view.total} waiting for your answer; of task ${shownText(view.task, { max: 100 })}: ${
      view.groups.reduce((sum, group) => sum + group.items.length + group.more, 0)
    }`;
  return (
    <section id="approvals" aria-labelledby="pending-heading">
      <h2 id="pending-heading" aria-live="polite">{heading}</h2>
      {view.groups.flatMap((group) => [
        ...group.items.map((item) => (
          <ApprovalCard
            item={item}
            task={props.tasks.get(item.task) ?? null}
            now={props.now}
            csrf={props.csrf}
          />
        )),
        group.more === 0 || view.task !== null ? null : <MoreNote group={group} />,
      ])}
      <PageLinks view={view} />
    </section>
  );
}

/** How many more a task has waiting than its cards here, and the link to all of them. */
function MoreNote(props: { group: ApprovalGroup }): Child {
  const { task, more } = props.group;
  return (
    <p class="more" id={`more-${encodeURIComponent(task)}`} data-live="note">
      {`${more} more from task ${shownText(task, { max: 100 })}: `}
      <a href={pageLink({ task }, 1)}>all of them, oldest first</a>
    </p>
  );
}

/** Links to the pages before and after this one, when there are. */
function PageLinks(props: { view: ApprovalsView }): Child {
  const view = props.view;
  const links: Child[] = [];
  if (view.task !== null) links.push(<a href="/approvals">every task's</a>);
  if (view.page > 1) links.push(<a href={pageLink(view, view.page - 1)} rel="prev">earlier</a>);
  if (view.page < view.pages) {
    links.push(<a href={pageLink(view, view.page + 1)} rel="next">later</a>);
  }
  if (links.length === 0) return null;
  return (
    <nav class="pages" id="approvals-pages" data-live="note" aria-label="Pages of approvals">
      {`Page ${view.page} of ${view.pages}: `}
      {links.flatMap((link, index) => index === 0 ? [link] : [" · ", link])}
    </nav>
  );
}

function ApprovalCard(
  props: { item: PendingApprovalView; task: ListedTask | null; now: Date; csrf: string },
): Child {
  const item = props.item;
  const task = props.task;
  const [head] = approvalBlock(item, props.now).split("\n");
  const parts = head.split("  ");
  const id = `approval-${item.approval}`;
  return (
    <article
      class="card"
      id={id}
      aria-labelledby={`${id}-title`}
      data-approval={item.approval}
      data-live="card"
    >
      <h3 id={`${id}-title`}>
        {`Approval ${item.approval}: `}
        <code>{shownText(item.tool, { max: 200 })}</code>
      </h3>
      <dl>
        <dt>Arguments</dt>
        <dd>
          <pre class="arguments"><code>{shownText(item.arguments, { max: ARGUMENTS_MAX })}</code></pre>
        </dd>
        <dt>Why it asks</dt>
        <dd>{kindText(item)}</dd>
        <dt>Grant</dt>
        <dd>{item.grant === null ? "none" : <code>{shownText(item.grant)}</code>}</dd>
        <dt>Taint</dt>
        <dd>
          <Help topic="taint">{item.taint}</Help>
        </dd>
        <dt>Task</dt>
        <dd>
          <a href={`/tasks/${encodeURIComponent(item.task)}`}>{shownText(item.task)}</a>
        </dd>
        {task === null ? null : (
          <>
            <dt>Asked by</dt>
            <dd class="worker">{workerName(task.worker)}</dd>
            <dt>Its prompt</dt>
            <dd class="prompt data">{promptLine(task.prompt)}</dd>
            <dt>Spent</dt>
            <dd class="spent">{spendingText(task)}</dd>
          </>
        )}
        {item.costCents === null ? null : (
          <>
            <dt>Cost</dt>
            <dd class="cost">{centsText(item.costCents)}</dd>
          </>
        )}
        <dt>Asked</dt>
        <dd>
          <time datetime={item.created}>{parts[1]}</time>
        </dd>
        <dt>Expires</dt>
        <dd>
          <time datetime={item.expires}>{parts[2].replace(/^expires /, "")}</time>
        </dd>
      </dl>
      <div class="actions">
        <form method="post" action={`/approvals/${item.approval}/approve`}>
          <Csrf token={props.csrf} />
          <button type="submit" class="approve" aria-describedby={`${id}-title`}>Approve</button>
        </form>
        <form method="post" action={`/approvals/${item.approval}/refuse`}>
          <Csrf token={props.csrf} />
          <label>
            {"Reason (optional) "}
            <input type="text" name="reason" maxlength={2000} autocomplete="off" />
          </label>
          <button type="submit" class="refuse" aria-describedby={`${id}-title`}>Refuse</button>
        </form>
      </div>
    </article>
  );
}

/** Why the owner is asked, in words: a grant, a call or model request over budget, a question. */
export function kindText(item: PendingApprovalView): string {
  if (item.kind === "budget" && item.tool === "box.model") {
    return "the task's model spend is over its budget; approving lets its next model request go";
  }
  if (item.kind === "budget") return "the call would take the task over its budget";
  if (item.kind === "ask") return "the task asks you a question";
  return "an ask grant matched";
}

/** The whole Approvals page. */
export function ApprovalsPage(
  props: {
    view: ApprovalsView;
    tasks: TaskBriefs;
    now: Date;
    csrf: string;
    notice: string | null;
  },
): Child {
  return (
    <Layout title="Approvals" current="/approvals" csrf={props.csrf}>
      <Notice text={props.notice} />
      <ApprovalsList view={props.view} tasks={props.tasks} now={props.now} csrf={props.csrf} />
    </Layout>
  );
}

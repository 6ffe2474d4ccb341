/** The Approvals page: each pending approval as `gurt approvals` shows it, with Approve and Refuse. */
// deno-lint-ignore-file jsx-key -- rendered on the server only: keys matter to a client
// reconciler, and Hono would print them as attributes.
import type { Child } from "hono/jsx";
import type { PendingApprovalView } from "../../admin/mod.ts";
import { approvalBlock, escapeArguments } from "../../owner-text/mod.ts";
import { Csrf, Layout, Notice } from "./layout.tsx";

/** The list of pending approvals; the live view replaces this element whole. */
export function ApprovalsList(
  props: { items: PendingApprovalView[]; now: Date; csrf: string },
): Child {
  return (
    <section id="approvals" aria-labelledby="pending-heading">
      <h2 id="pending-heading" aria-live="polite">
        {props.items.length === 0
          ? "Nothing is waiting for you"
          : `${props.items.length} waiting for your answer`}
      </h2>
      {props.items.map((item) => <ApprovalCard item={item} now={props.now} csrf={props.csrf} />)}
    </section>
  );
}

function ApprovalCard(props: { item: PendingApprovalView; now: Date; csrf: string }): Child {
  const item = props.item;
  const [head] = approvalBlock(item, props.now).split("\n");
  const parts = head.split("  ");
  const id = `approval-${item.approval}`;
  return (
    <article class="card" id={id} aria-labelledby={`${id}-title`} data-approval={item.approval}>
      <h3 id={`${id}-title`}>
        {`Approval ${item.approval}: `}
        <code>{escapeArguments(item.tool)}</code>
      </h3>
      <dl>
        <dt>Arguments</dt>
        <dd>
          <pre class="arguments"><code>{escapeArguments(item.arguments)}</code></pre>
        </dd>
        <dt>Why it asks</dt>
        <dd>{kindText(item)}</dd>
        <dt>Grant</dt>
        <dd>{item.grant === null ? "none" : <code>{escapeArguments(item.grant)}</code>}</dd>
        <dt>Taint</dt>
        <dd>{item.taint}</dd>
        <dt>Task</dt>
        <dd>
          <a href={`/tasks/${encodeURIComponent(item.task)}`}>{escapeArguments(item.task)}</a>
        </dd>
        {item.costCents === null ? null : (
          <>
            <dt>Cost</dt>
            <dd>{`${item.costCents}¢`}</dd>
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
  props: { items: PendingApprovalView[]; now: Date; csrf: string; notice: string | null },
): Child {
  return (
    <Layout title="Approvals" current="/approvals" csrf={props.csrf}>
      <Notice text={props.notice} />
      <ApprovalsList items={props.items} now={props.now} csrf={props.csrf} />
    </Layout>
  );
}

/** The Approvals page, its live list, and the Approve and Refuse answers. */
import { Hono } from "hono";
import type { AdminClient, AnsweredAnswer, PendingApprovalView } from "../../admin/mod.ts";
import type { ApprovalWatch } from "../approval_watch.ts";
import type { PortalEnv } from "../context.ts";
import type { LiveStreams } from "../live_events.ts";
import { type ApprovalsView, approvalsView, type PageQuery } from "../approvals_paging.ts";
import { ApprovalsList, ApprovalsPage, type TaskBriefs } from "../pages/approvals_page.tsx";
import { adminOk, csrf, formText, type RouteDeps } from "./route_helpers.ts";

const BY = "the owner, in the portal";
const WORD = /^[a-z][a-z_]{0,40}$/;

/** `/approvals`, `/events/approvals`, and the answers. */
export function approvalRoutes(
  options: RouteDeps & { streams: LiveStreams; approvals: ApprovalWatch },
): Hono<PortalEnv> {
  const { admin, clock, streams, approvals } = options;
  const app = new Hono<PortalEnv>();
  app.get("/approvals", async (c) => {
    const view = approvalsView(await pending(admin), pageQuery(c.req.query()));
    const tasks = await taskBriefs(admin, view);
    const answered = c.req.query("answered");
    const outcome = c.req.query("outcome") ?? "";
    const notice = answered !== undefined && /^\d{1,16}$/.test(answered) && WORD.test(outcome)
      ? `Approval ${answered}: ${outcome.replaceAll("_", " ")}.`
      : null;
    return c.html(
      <ApprovalsPage view={view} tasks={tasks} now={clock()} csrf={csrf(c)} notice={notice} />,
    );
  });
  app.get("/events/approvals", (c) => {
    const token = csrf(c);
    // The same page as the one open: its task and page number.
    const query = pageQuery(c.req.query());
    return streams.serve(c, {
      subscribe: (listener) => approvals.onChange(listener),
      render: async () => {
        const view = approvalsView(await pending(admin), query);
        const tasks = await taskBriefs(admin, view);
        return String(
          await <ApprovalsList view={view} tasks={tasks} now={clock()} csrf={token} />,
        );
      },
    });
  });
  app.post("/approvals/:id/approve", async (c) => {
    const id = c.req.param("id");
    const answer = adminOk(await admin.approve(id, { by: BY }));
    return c.redirect(`/approvals?${answeredQuery(id, answer.outcome)}`, 303);
  });
  app.post("/approvals/:id/refuse", async (c) => {
    const id = c.req.param("id");
    const reason = formText(await c.req.parseBody(), "reason") || undefined;
    const answer = adminOk(await admin.refuse(id, { reason, by: BY }));
    return c.redirect(`/approvals?${answeredQuery(id, answer.outcome)}`, 303);
  });

  return app;
}

function pageQuery(query: Record<string, string>): PageQuery {
  return { task: query.task, page: query.page };
}

async function pending(admin: AdminClient): Promise<PendingApprovalView[]> {
  return adminOk(await admin.approvals()).items;
}

/** The tasks of the cards shown, by id, for their who and why (none asked for a page of none). */
export async function taskBriefs(admin: AdminClient, view: ApprovalsView): Promise<TaskBriefs> {
  if (view.groups.length === 0) return new Map();
  const shown = new Set(view.groups.map((group) => group.task));
  const tasks = adminOk(await admin.tasks()).tasks.filter((task) => shown.has(task.id));
  return new Map(tasks.map((task) => [task.id, task]));
}

function answeredQuery(id: string, outcome: AnsweredAnswer["outcome"]): string {
  const reason = outcome.outcome === "denied" ? outcome.reason : "";
  const word = outcome.outcome === "allowed" ? "allowed" : `denied_${reason}`;
  return `answered=${encodeURIComponent(id)}&outcome=${encodeURIComponent(word)}`;
}

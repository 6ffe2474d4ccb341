/** The Tasks pages: the list and the Start form, one task, and Stop. */
import { Hono } from "hono";
import type { AdminClient, JournalLineView, StartTaskInput } from "../../admin/mod.ts";
import type { ApprovalWatch } from "../approval_watch.ts";
import type { PortalEnv } from "../context.ts";
import type { LiveStreams } from "../live_events.ts";
import {
  journalShown,
  TaskLive,
  TaskPage,
  type TaskPageView,
  TasksPage,
} from "../pages/tasks_page.tsx";
import { watchTask } from "../task_watch.ts";
import { ApprovalAnswers } from "../approval_answers.ts";
import { adminOk, csrf, formText, type RouteDeps } from "./route_helpers.ts";

/** `/tasks`, `/tasks/:id`, its live part at `/events/tasks/:id`, and `/tasks/:id/stop`. */
export function taskRoutes(
  options: RouteDeps & { streams: LiveStreams; approvals: ApprovalWatch },
): Hono<PortalEnv> {
  const { admin, streams, approvals } = options;
  const answers = new ApprovalAnswers(admin);
  const app = new Hono<PortalEnv>();
  app.get("/tasks", async (c) => {
    const tasks = adminOk(await admin.tasks()).tasks;
    const started = c.req.query("started");
    const notice = started !== undefined && /^[a-z0-9]{1,24}$/.test(started)
      ? `Task ${started} started.`
      : null;
    return c.html(<TasksPage tasks={tasks} csrf={csrf(c)} notice={notice} error={null} />);
  });
  app.post("/tasks", async (c) => {
    const form = await c.req.parseBody();
    const text = (name: string) => formText(form, name, { trim: false });
    const tools = text("tools").split(/[\s,]+/).filter((tool) => tool !== "");
    const budget = text("budget").trim();
    const command = text("command").split(/\r?\n/).filter((arg) => arg !== "");
    const body: StartTaskInput = {
      prompt: text("prompt"),
      tools,
      budgetCents: budget === "" ? null : Number(budget),
      worker: text("worker") === "cmd" ? { kind: "cmd", command } : { kind: "none" },
    };
    const answer = await admin.startTask(body);
    if (!answer.ok) {
      const tasks = adminOk(await admin.tasks()).tasks;
      const error = `The task was not started: ${answer.error}`;
      return c.html(<TasksPage tasks={tasks} csrf={csrf(c)} notice={null} error={error} />, 400);
    }
    return c.redirect(`/tasks?started=${encodeURIComponent(answer.value.task.id)}`, 303);
  });
  app.get("/tasks/:id", async (c) => {
    const { view } = await taskPageView({ admin, answers }, c.req.param("id"), c.req.query("from"));
    const notice = c.req.query("stopped") === "1" ? "The task was stopped." : null;
    return c.html(<TaskPage view={view} csrf={csrf(c)} notice={notice} />);
  });
  app.get("/events/tasks/:id", async (c) => {
    csrf(c); // a signed-in page's stream, as the Approvals page's
    const id = c.req.param("id");
    const from = c.req.query("from");
    // A task that is not there is refused before the stream starts.
    const first = await taskPageView({ admin, answers }, id, from);
    let fresh: TaskPageView | null = first.view;
    return streams.serve(c, {
      event: "task",
      subscribe: (listener) => {
        const stopTask = watchTask(admin, id, listener, first.journalLength);
        const stopApprovals = approvals.onChange(listener);
        return () => {
          stopTask();
          stopApprovals();
        };
      },
      render: async () => {
        const view = fresh ?? (await taskPageView({ admin, answers }, id, from)).view;
        fresh = null;
        return String(await <TaskLive view={view} />);
      },
    });
  });
  app.post("/tasks/:id/stop", async (c) => {
    const id = c.req.param("id");
    const reason = formText(await c.req.parseBody(), "reason") || undefined;
    adminOk(await admin.stopTask(id, { reason }));
    return c.redirect(`/tasks/${encodeURIComponent(id)}?stopped=1`, 303);
  });

  return app;
}

/** What one task page shows, from the admin socket, and how many journal lines it was made from. */
async function taskPageView(
  deps: { admin: AdminClient; answers: ApprovalAnswers },
  id: string,
  from: string | undefined,
): Promise<{ view: TaskPageView; journalLength: number }> {
  const { admin, answers } = deps;
  const shown = adminOk(await admin.task(id));
  const records = adminOk(await admin.taskRecords(shown.task.id)).records;
  const pending = new Set(shown.pending);
  const items = adminOk(await admin.approvals()).items.filter((item) => pending.has(item.approval));
  const asked = approvalIds(shown.journal).filter((approval) => !pending.has(approval));
  const answered = await answers.of(shown.task.id, asked);
  const seqs = new Set(records.map((record) => record.seq));
  const all = [...records, ...answered.filter((record) => !seqs.has(record.seq))]
    .sort((a, b) => a.seq - b.seq);
  const view = {
    task: { ...shown.task, pending: shown.pending },
    journal: journalShown(shown.journal, from),
    records: all,
    approvals: items,
    answered,
  };
  return { view, journalLength: shown.journal.length };
}

/** The approvals a task's journal names: its calls' and model requests' waits, and its asks. */
function approvalIds(journal: JournalLineView[]): number[] {
  const ids = new Set<number>();
  for (const line of journal) {
    const detail = line.detail as { approval?: unknown } | undefined;
    const id = line.type === "ask"
      ? line.approval
      : line.type === "event" && line.event === "approval_pending"
      ? detail?.approval
      : undefined;
    if (typeof id === "number" && Number.isSafeInteger(id)) ids.add(id);
  }
  return [...ids].sort((a, b) => a - b);
}

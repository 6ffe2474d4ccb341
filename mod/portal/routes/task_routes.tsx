/** The Tasks pages: the list and the Start form, one task, and Stop. */
import { Hono } from "hono";
import type { StartTaskInput } from "../../admin/mod.ts";
import type { PortalEnv } from "../context.ts";
import { journalShown, TaskPage, TasksPage } from "../pages/tasks_page.tsx";
import { adminOk, csrf, formText, type RouteDeps } from "./route_helpers.ts";

/** `/tasks`, `/tasks/:id` and `/tasks/:id/stop`. */
export function taskRoutes(options: RouteDeps): Hono<PortalEnv> {
  const { admin } = options;
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
    const shown = adminOk(await admin.task(c.req.param("id")));
    const records = adminOk(await admin.taskRecords(shown.task.id)).records;
    const notice = c.req.query("stopped") === "1" ? "The task was stopped." : null;
    return c.html(
      <TaskPage
        task={{ ...shown.task, pending: shown.pending }}
        journal={journalShown(shown.journal, c.req.query("from"))}
        records={records}
        csrf={csrf(c)}
        notice={notice}
      />,
    );
  });
  app.post("/tasks/:id/stop", async (c) => {
    const id = c.req.param("id");
    const reason = formText(await c.req.parseBody(), "reason") || undefined;
    adminOk(await admin.stopTask(id, { reason }));
    return c.redirect(`/tasks/${encodeURIComponent(id)}?stopped=1`, 303);
  });

  return app;
}

/** The Tasks pages: the list and the Start form, one task, and Stop. */
import { Hono } from "hono";
import { adminJson } from "../admin_client.ts";
import type { PortalEnv } from "../context.ts";
import { TaskPage, TasksPage, type TaskView } from "../pages/tasks_page.tsx";
import { taskRecords } from "../views.ts";
import { adminOk, csrf, errorOf, formText, type RouteDeps } from "./route_helpers.ts";

/** `/tasks`, `/tasks/:id` and `/tasks/:id/stop`. */
export function taskRoutes(options: RouteDeps): Hono<PortalEnv> {
  const { deps, admin } = options;
  const app = new Hono<PortalEnv>();
  app.get("/tasks", async (c) => {
    const answer = await adminOk(admin, { method: "GET", path: "/tasks" });
    const started = c.req.query("started");
    const notice = started !== undefined && /^[a-z0-9]{1,24}$/.test(started)
      ? `Task ${started} started.`
      : null;
    return c.html(
      <TasksPage tasks={answer.body.tasks} csrf={csrf(c)} notice={notice} error={null} />,
    );
  });
  app.post("/tasks", async (c) => {
    const form = await c.req.parseBody();
    const text = (name: string) => formText(form, name, { trim: false });
    const tools = text("tools").split(/[\s,]+/).filter((tool) => tool !== "");
    const budget = text("budget").trim();
    const command = text("command").split(/\r?\n/).filter((arg) => arg !== "");
    const body = {
      prompt: text("prompt"),
      tools,
      budgetCents: budget === "" ? null : Number(budget),
      worker: text("worker") === "cmd" ? { kind: "cmd", command } : { kind: "none" },
    };
    const answer = await adminJson(admin, { method: "POST", path: "/tasks", body });
    if (answer.status !== 200) {
      const list = await adminOk(admin, { method: "GET", path: "/tasks" });
      const error = `The task was not started: ${errorOf(answer)}`;
      return c.html(
        <TasksPage tasks={list.body.tasks} csrf={csrf(c)} notice={null} error={error} />,
        400,
      );
    }
    return c.redirect(`/tasks?started=${encodeURIComponent(answer.body.task.id)}`, 303);
  });
  app.get("/tasks/:id", async (c) => {
    const id = c.req.param("id");
    const answer = await adminOk(admin, {
      method: "GET",
      path: `/tasks/${encodeURIComponent(id)}`,
    });
    const task: TaskView = { ...answer.body.task, pending: answer.body.pending };
    const records = await taskRecords(deps.home, task.id);
    const notice = c.req.query("stopped") === "1" ? "The task was stopped." : null;
    return c.html(
      <TaskPage
        task={task}
        journal={answer.body.journal}
        records={records}
        csrf={csrf(c)}
        notice={notice}
      />,
    );
  });
  app.post("/tasks/:id/stop", async (c) => {
    const id = c.req.param("id");
    const reason = formText(await c.req.parseBody(), "reason") || undefined;
    await adminOk(admin, {
      method: "POST",
      path: `/tasks/${encodeURIComponent(id)}/stop`,
      body: { reason },
    });
    return c.redirect(`/tasks/${encodeURIComponent(id)}?stopped=1`, 303);
  });

  return app;
}

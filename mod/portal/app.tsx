/**
 * The portal's Hono app: the owner API at /api (the admin handlers, forwarded), the pages, the
 * live approvals stream, sign-in and sign-out. Every request passes the guard first.
 */
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, setCookie } from "hono/cookie";
import { secureHeaders } from "hono/secure-headers";
import type { BrokerDeps, PendingApproval } from "../broker/mod.ts";
import { type AdminAnswer, type AdminFetch, adminJson, forwardToAdmin } from "./admin_client.ts";
import { SCRIPT, STYLE } from "./assets.ts";
import { type PortalEnv, PortalError, SESSION_COOKIE } from "./context.ts";
import { guard } from "./guard.ts";
import type { LiveStreams } from "./live_events.ts";
import { sameSecret } from "./owner_token.ts";
import { ApprovalsList, ApprovalsPage } from "./pages/approvals_page.tsx";
import { AuditPage } from "./pages/audit_page.tsx";
import { GrantsPage } from "./pages/grants_page.tsx";
import { KeysPage, type KeyView } from "./pages/keys_page.tsx";
import { ErrorPage, LoginPage } from "./pages/login_page.tsx";
import { TaskPage, TasksPage, type TaskView } from "./pages/tasks_page.tsx";
import { type Session, SESSION_TTL_MS, type SessionStore } from "./sessions.ts";
import { auditView, grantViews, taskRecords } from "./views.ts";

/** What the portal's app is built from. */
export interface PortalAppOptions {
  deps: BrokerDeps;
  admin: AdminFetch;
  store: SessionStore;
  hosts: Set<string>;
  streams: LiveStreams;
}

const BY = "the owner, in the portal";
const WORD = /^[a-z][a-z_]{0,40}$/;
const KEY_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** Builds the portal's app. */
export function portalApp(options: PortalAppOptions): Hono<PortalEnv> {
  const { deps, admin, store, streams } = options;
  const app = new Hono<PortalEnv>();
  app.use(secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'"],
      connectSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
    referrerPolicy: "same-origin",
    xFrameOptions: "DENY",
    strictTransportSecurity: false,
  }));
  app.use(async (c, next) => {
    await next();
    c.res.headers.set("cache-control", "no-store");
  });
  app.use(bodyLimit({
    maxSize: 2 * 1024 * 1024,
    onError: () => {
      throw new PortalError(400, "the request body is larger than 2 MB, the portal's limit");
    },
  }));
  app.use(guard(store, { hosts: options.hosts, token: store.token }));

  app.get("/static/portal.css", (c) => c.body(STYLE, 200, { "content-type": "text/css" }));
  app.get("/static/portal.js", (c) => c.body(SCRIPT, 200, { "content-type": "text/javascript" }));

  app.get("/login", (c) => {
    const code = c.req.query("code") ?? null;
    return c.html(<LoginPage code={code} error={null} />);
  });
  app.post("/login", async (c) => {
    const form = await c.req.parseBody();
    let session: Session | null = null;
    let error = "the owner token is wrong";
    if (typeof form.code === "string") {
      const result = store.login(form.code);
      if (typeof result !== "string") session = result;
      else error = LOGIN_REFUSALS[result];
    } else if (typeof form.token === "string" && sameSecret(form.token.trim(), store.token)) {
      session = store.open();
    }
    if (session === null) {
      deps.log(`gurt portal: a sign-in was refused (${error})`);
      const message =
        `${error}; run gurt portal for a new link; see runbook.md#portal-login-refused`;
      return c.html(<LoginPage code={null} error={message} />, 401);
    }
    setCookie(c, SESSION_COOKIE, session.id, {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
      maxAge: Math.floor(SESSION_TTL_MS / 1000),
    });
    return c.redirect("/approvals", 303);
  });
  app.post("/logout", (c) => {
    const session = c.get("session");
    if (session !== null) store.end(session.id);
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.redirect("/login", 303);
  });
  app.get("/", (c) => c.redirect("/approvals", 303));

  // The owner API: the admin handlers, for programs holding the owner token or a signed-in page.
  app.all("/api/*", (c) => forwardToAdmin(admin, c.req.raw));

  app.get("/approvals", async (c) => {
    const items = await pending(admin);
    const answered = c.req.query("answered");
    const outcome = c.req.query("outcome") ?? "";
    const notice = answered !== undefined && /^\d{1,16}$/.test(answered) && WORD.test(outcome)
      ? `Approval ${answered}: ${outcome.replaceAll("_", " ")}.`
      : null;
    return c.html(
      <ApprovalsPage items={items} now={deps.clock()} csrf={csrf(c)} notice={notice} />,
    );
  });
  app.get("/events/approvals", (c) => {
    const token = csrf(c);
    return streams.serve(c, {
      subscribe: (listener) => deps.approvals.onChange(listener),
      render: async () =>
        String(
          await <ApprovalsList items={await pending(admin)} now={deps.clock()} csrf={token} />,
        ),
    });
  });
  app.post("/approvals/:id/approve", async (c) => {
    const id = c.req.param("id");
    const answer = await adminOk(admin, "POST", `/approvals/${id}/approve`, { by: BY });
    return c.redirect(`/approvals?${answeredQuery(id, answer.body.outcome)}`, 303);
  });
  app.post("/approvals/:id/refuse", async (c) => {
    const id = c.req.param("id");
    const reason = formText(await c.req.parseBody(), "reason") || undefined;
    const answer = await adminOk(admin, "POST", `/approvals/${id}/refuse`, { reason });
    return c.redirect(`/approvals?${answeredQuery(id, answer.body.outcome)}`, 303);
  });

  app.get("/tasks", async (c) => {
    const answer = await adminOk(admin, "GET", "/tasks");
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
      const list = await adminOk(admin, "GET", "/tasks");
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
    const answer = await adminOk(admin, "GET", `/tasks/${encodeURIComponent(id)}`);
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
    await adminOk(admin, "POST", `/tasks/${encodeURIComponent(id)}/stop`, { reason });
    return c.redirect(`/tasks/${encodeURIComponent(id)}?stopped=1`, 303);
  });

  app.get("/keys", async (c) => {
    const notice = keysNotice(c.req.query("done"), c.req.query("key"));
    return c.html(
      <KeysPage keys={await vaultKeys(admin)} csrf={csrf(c)} notice={notice} error={null} />,
    );
  });
  app.post("/keys", async (c) => {
    const form = await c.req.parseBody();
    const name = formText(form, "name");
    const value = formText(form, "value", { trim: false });
    if (!KEY_NAME.test(name)) {
      return keysError(c, admin, "A key name is letters, digits, `_`, `.` and `-`.", 400);
    }
    const answer = await adminJson(admin, {
      method: "PUT",
      path: `/api/vault/${encodeURIComponent(name)}`,
      body: { value },
    });
    if (answer.status === 404) return keysError(c, admin, vaultMissing(), 503);
    if (answer.status !== 200) {
      return keysError(c, admin, `The key ${name} was not set: ${errorOf(answer)}`, 400);
    }
    return c.redirect(`/keys?done=set&key=${encodeURIComponent(name)}`, 303);
  });
  for (const act of ["delete", "deny", "allow"] as const) {
    app.post(`/keys/:name/${act}`, async (c) => {
      const name = c.req.param("name");
      const form = await c.req.parseBody();
      const path = `/api/vault/${encodeURIComponent(name)}`;
      const answer = act === "delete"
        ? await adminJson(admin, { method: "DELETE", path })
        : await adminJson(admin, {
          method: "POST",
          path: `${path}/${act}`,
          body: { app: formText(form, "app") },
        });
      if (answer.status === 404 && (await vaultKeys(admin)) === null) {
        return keysError(c, admin, vaultMissing(), 503);
      }
      if (answer.status !== 200) {
        const why = typeof answer.body?.error === "string"
          ? answer.body.error
          : "the vault refused";
        return keysError(c, admin, `The key ${name} was not changed: ${why}`, 400);
      }
      return c.redirect(`/keys?done=${act}&key=${encodeURIComponent(name)}`, 303);
    });
  }

  app.get("/grants", async (c) => {
    const { grants, problems } = await grantViews(deps.home, deps.registry.appToolNames());
    return c.html(<GrantsPage grants={grants} problems={problems} csrf={csrf(c)} />);
  });
  app.get("/audit", async (c) => {
    return c.html(<AuditPage audit={await auditView(deps.home)} csrf={csrf(c)} />);
  });

  app.notFound(() => {
    throw new PortalError(404, "there is no such page in the portal");
  });
  app.onError((error, c) => {
    const known = error instanceof PortalError;
    if (!known) deps.log(`gurt portal: ${c.req.method} ${c.req.path} failed: ${error.message}`);
    const status = known ? error.status : 500;
    const message = known ? error.message : "the portal could not answer this request; the " +
      "core's log says why";
    if (c.req.path.startsWith("/api/") || c.req.path.startsWith("/events/")) {
      return c.json({ error: message }, status);
    }
    let signedIn = false;
    try {
      signedIn = (c.get("session") ?? null) !== null;
    } catch {
      signedIn = false;
    }
    return c.html(<ErrorPage status={status} message={message} signedIn={signedIn} />, status);
  });
  return app;
}

const LOGIN_REFUSALS = {
  not_a_code: "this sign-in link is not one gurt portal made for this box",
  expired: "this sign-in link has expired or was made before gurt serve last started",
  spent: "this sign-in link was already used; each link signs in once",
} as const;

function csrf(c: Context<PortalEnv>): string {
  const session = c.get("session");
  if (session === null) {
    throw new PortalError(400, "the pages need a signed-in browser; the owner token works at /api");
  }
  return session.csrf;
}

async function pending(admin: AdminFetch): Promise<PendingApproval[]> {
  return (await adminOk(admin, "GET", "/approvals")).body.items;
}

/** Calls the admin handlers and turns an error answer into the portal's error. */
async function adminOk(
  admin: AdminFetch,
  method: string,
  path: string,
  body?: unknown,
): Promise<AdminAnswer> {
  const answer = await adminJson(admin, { method, path, body });
  if (answer.status === 200) return answer;
  const message = errorOf(answer);
  const status = answer.status === 404 ? 404 : answer.status === 503 ? 503 : 400;
  throw new PortalError(status, message);
}

/** The sentence of an admin error answer. */
function errorOf(answer: AdminAnswer): string {
  return typeof answer.body?.error === "string" ? answer.body.error : "the core refused it";
}

/** A form field as text (trimmed unless asked not to); "" when absent or a file. */
function formText(
  form: Record<string, unknown>,
  name: string,
  options: { trim: boolean } = { trim: true },
): string {
  const value = form[name];
  if (typeof value !== "string") return "";
  return options.trim ? value.trim() : value;
}

function answeredQuery(id: string, outcome: { outcome: string; reason?: string }): string {
  const word = outcome.outcome === "allowed" ? "allowed" : `denied_${outcome.reason ?? ""}`;
  return `answered=${encodeURIComponent(id)}&outcome=${encodeURIComponent(word)}`;
}

async function vaultKeys(admin: AdminFetch): Promise<KeyView[] | null> {
  const answer = await adminJson(admin, { method: "GET", path: "/api/vault" });
  if (answer.status !== 200 || !Array.isArray(answer.body?.keys)) return null;
  return answer.body.keys;
}

function vaultMissing(): string {
  return "The vault is not available on this box, so the key was not set; " +
    "see runbook.md#portal-vault-unavailable";
}

async function keysError(
  c: Context<PortalEnv>,
  admin: AdminFetch,
  error: string,
  status: 400 | 503,
): Promise<Response> {
  const keys = await vaultKeys(admin);
  return c.html(<KeysPage keys={keys} csrf={csrf(c)} notice={null} error={error} />, status);
}

function keysNotice(done: string | undefined, key: string | undefined): string | null {
  if (key === undefined || !KEY_NAME.test(key)) return null;
  if (done === "set") return `The key ${key} was set.`;
  if (done === "delete") return `The key ${key} was removed.`;
  if (done === "deny") return `The key ${key} was turned off for that app.`;
  if (done === "allow") return `The key ${key} was turned on again for that app.`;
  return null;
}

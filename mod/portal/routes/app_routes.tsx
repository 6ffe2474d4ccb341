/**
 * The Apps page, an app's page and their forms, over the admin socket's /apps routes and the
 * vault's deny list: `/apps`, `/apps/:name`, `POST /apps/:name/enable|disable`,
 * `GET /apps/:name/remove` (the step that asks) and `POST /apps/:name/remove` (with `confirm=yes`),
 * and `POST /apps/:name/keys/:key/off|on` (POST /api/vault/:key/deny|allow {app}).
 */
import { type Context, Hono } from "hono";
import type { AdminClient, AdminResult } from "../../admin/mod.ts";
import { shownText } from "../../owner-text/mod.ts";
import { type PortalEnv, PortalError } from "../context.ts";
import { AppPage } from "../pages/app_page.tsx";
import { AppsPage, RemoveAppPage } from "../pages/apps_page.tsx";
import { adminOk, csrf, formText, type RouteDeps } from "./route_helpers.ts";

/** An app's name, as the core checks it. */
const APP_NAME = /^[a-z][a-z0-9-]{0,31}$/;
/** A vault key's name, as the Accounts & Keys page checks it. */
const KEY_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

/** The notices an act leaves on the page it goes back to. */
const DONE: Record<string, (subject: string) => string> = {
  enabled: (app) => `The app ${app} was turned on: its tools are offered again.`,
  disabled: (app) => `The app ${app} was turned off: its tools are not offered.`,
  removed: (app) => `The app ${app} was removed.`,
  off: (key) => `The key ${key} was turned off for this app.`,
  on: (key) => `The key ${key} was turned on again for this app.`,
};

/** The Apps routes. */
export function appRoutes(options: RouteDeps): Hono<PortalEnv> {
  const { admin } = options;
  const app = new Hono<PortalEnv>();
  app.get("/apps", async (c) => {
    const { apps } = adminOk(await admin.apps());
    const notice = noticeOf(c.req.query("done"), c.req.query("app"), APP_NAME);
    return c.html(<AppsPage apps={apps} csrf={csrf(c)} notice={notice} />);
  });
  app.get("/apps/:name", async (c) => {
    const name = appName(c.req.param("name"));
    const notice = noticeOf(c.req.query("done"), c.req.query("key") ?? name, KEY_NAME);
    return await appPage(c, admin, name, { notice, error: null, status: 200 });
  });
  for (const act of ["enable", "disable"] as const) {
    app.post(`/apps/:name/${act}`, async (c) => {
      const name = appName(c.req.param("name"));
      const answer = await admin.setAppEnabled(name, act === "enable");
      if (!answer.ok) return await refused(c, admin, name, `The app was not changed`, answer);
      return c.redirect(`/apps/${name}?done=${act}d`, 303);
    });
  }
  app.get("/apps/:name/remove", async (c) => {
    const name = appName(c.req.param("name"));
    const { app: detail } = adminOk(await admin.app(name));
    return c.html(<RemoveAppPage name={detail.name} tools={detail.tools} csrf={csrf(c)} />);
  });
  app.post("/apps/:name/remove", async (c) => {
    const name = appName(c.req.param("name"));
    const form = await c.req.parseBody();
    // Only the asking page's button removes: any other post is sent to it first.
    if (formText(form, "confirm") !== "yes") return c.redirect(`/apps/${name}/remove`, 303);
    const answer = await admin.removeApp(name);
    if (!answer.ok) return await refused(c, admin, name, `The app was not removed`, answer);
    return c.redirect(`/apps?done=removed&app=${name}`, 303);
  });
  for (const act of ["off", "on"] as const) {
    app.post(`/apps/:name/keys/:key/${act}`, async (c) => {
      const name = appName(c.req.param("name"));
      const key = c.req.param("key");
      if (!KEY_NAME.test(key)) {
        throw new PortalError(400, "a vault key's name is letters, digits, `_`, `.` and `-`");
      }
      const answer = await admin.setKeyUse(key, { app: name, denied: act === "off" });
      if (!answer.ok) {
        return await refused(c, admin, name, `The key ${key} was not changed`, answer);
      }
      return c.redirect(`/apps/${name}?done=${act}&key=${encodeURIComponent(key)}`, 303);
    });
  }
  return app;
}

function appName(text: string): string {
  if (!APP_NAME.test(text)) {
    throw new PortalError(404, "there is no such app: an app's name is a-z, 0-9 and -");
  }
  return text;
}

/** The keys the vault has turned off for `app`; null when the vault is not available. */
async function deniedKeys(admin: AdminClient, app: string): Promise<Set<string> | null> {
  const answer = await admin.vaultKeys();
  if (!answer.ok) return null;
  return new Set(
    answer.value.keys.filter((key) => key.denied_apps.includes(app)).map((k) => k.name),
  );
}

async function appPage(
  c: Context<PortalEnv>,
  admin: AdminClient,
  name: string,
  shown: { notice: string | null; error: string | null; status: 200 | 400 | 404 | 503 },
): Promise<Response> {
  const { app: detail } = adminOk(await admin.app(name));
  const denied = await deniedKeys(admin, name);
  return c.html(
    <AppPage
      app={detail}
      denied={denied}
      csrf={csrf(c)}
      notice={shown.notice}
      error={shown.error}
    />,
    shown.status,
  );
}

/** The app's page again with the core's refusal on it (its text shown as data). */
async function refused(
  c: Context<PortalEnv>,
  admin: AdminClient,
  name: string,
  what: string,
  answer: AdminResult<unknown> & { ok: false },
): Promise<Response> {
  const status = answer.status === 404 ? 404 : answer.status === 503 ? 503 : 400;
  const error = `${what}: ${shownText(answer.error)}`;
  if (status === 404) throw new PortalError(404, error);
  return await appPage(c, admin, name, { notice: null, error, status });
}

function noticeOf(
  done: string | undefined,
  subject: string | undefined,
  name: RegExp,
): string | null {
  if (done === undefined || subject === undefined || !name.test(subject)) return null;
  return DONE[done]?.(subject) ?? null;
}

/** Signing in (a one-time code from `gurt portal`, or the owner token) and signing out. */
import { Hono } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { type PortalEnv, SESSION_COOKIE } from "../context.ts";
import { sameSecret } from "../owner_token.ts";
import { LoginPage } from "../pages/login_page.tsx";
import { type Session, SESSION_TTL_MS, type SessionStore } from "../sessions.ts";

const LOGIN_REFUSALS = {
  not_a_code: "this sign-in link is not one gurt portal made for this box",
  expired:
    "this sign-in link has expired, or was made before gurt serve (or its portal) last started",
  spent: "this sign-in link was already used; each link signs in once",
} as const;

/** The sign-in page, sign-in and sign-out. */
export function sessionRoutes(
  options: { log: (line: string) => void; store: SessionStore },
): Hono<PortalEnv> {
  const { log, store } = options;
  const app = new Hono<PortalEnv>();
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
      log(`gurt portal: a sign-in was refused (${error})`);
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
  return app;
}

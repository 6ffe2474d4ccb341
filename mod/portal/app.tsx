/**
 * The portal's Hono app: the shared middleware (security headers, body limit, the guard), the
 * static assets, the owner API at /api (the admin handlers, forwarded), the routers of the pages,
 * and the one error handler. Every request passes the guard first.
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { secureHeaders } from "hono/secure-headers";
import type { AdminClient } from "../admin/mod.ts";
import type { ApprovalWatch } from "./approval_watch.ts";
import { SCRIPT, STYLE } from "./assets.ts";
import { type PortalEnv, PortalError } from "./context.ts";
import { guard } from "./guard.ts";
import { grantsBanner } from "./grants_banner.ts";
import { IncompleteBodyError, incompleteBodyMessage } from "../net/mod.ts";
import type { LiveStreams } from "./live_events.ts";
import { forwardToAdmin } from "./owner_api.ts";
import { ErrorPage } from "./pages/login_page.tsx";
import { appRoutes } from "./routes/app_routes.tsx";
import { approvalRoutes } from "./routes/approval_routes.tsx";
import { keyRoutes } from "./routes/key_routes.tsx";
import { recordRoutes } from "./routes/record_routes.tsx";
import { sessionRoutes } from "./routes/session_routes.tsx";
import { taskRoutes } from "./routes/task_routes.tsx";
import type { SessionStore } from "./sessions.ts";

/** What the portal's app is built from. */
export interface PortalAppOptions {
  /** The admin socket: every read and every act of the pages and the owner API. */
  admin: AdminClient;
  store: SessionStore;
  hosts: Set<string>;
  streams: LiveStreams;
  approvals: ApprovalWatch;
  log: (line: string) => void;
  clock: () => Date;
}

/** Builds the portal's app. */
export function portalApp(options: PortalAppOptions): Hono<PortalEnv> {
  const { admin, store, streams, approvals, log, clock } = options;
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
  app.use(grantsBanner(admin));

  app.get("/static/portal.css", (c) => c.body(STYLE, 200, { "content-type": "text/css" }));
  app.get("/static/portal.js", (c) => c.body(SCRIPT, 200, { "content-type": "text/javascript" }));

  app.route("/", sessionRoutes({ log, store }));
  app.get("/", (c) => c.redirect("/approvals", 303));
  // The owner API: the admin socket, for programs holding the owner token or a signed-in page.
  app.all("/api/*", (c) => forwardToAdmin(admin, c.req.raw));
  app.route("/", approvalRoutes({ admin, clock, streams, approvals }));
  app.route("/", taskRoutes({ admin, clock, streams, approvals }));
  app.route("/", appRoutes({ admin, clock }));
  app.route("/", keyRoutes({ admin, clock }));
  app.route("/", recordRoutes({ admin, clock }));

  app.notFound(() => {
    throw new PortalError(404, "there is no such page in the portal");
  });
  app.onError((thrown, c) => {
    const error = incomplete(thrown)
      ? new PortalError(400, incompleteBodyMessage("gurt portal"))
      : thrown;
    const known = error instanceof PortalError;
    if (!known) log(`gurt portal: ${c.req.method} ${c.req.path} failed: ${error.message}`);
    const status = known ? error.status : 500;
    const message = known ? error.message : "the portal could not answer this request; the " +
      "core's log says why";
    if (c.req.path.startsWith("/api/") || c.req.path.startsWith("/events/")) {
      return c.json({ error: message }, status);
    }
    const signedIn = (c.get("session") ?? null) !== null;
    return c.html(<ErrorPage status={status} message={message} signedIn={signedIn} />, status);
  });
  return app;
}

/** Whether `error` (or what it was caused by) is a request body the client cut short. */
function incomplete(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 4; depth++) {
    if (at instanceof IncompleteBodyError) return true;
    at = at.cause;
  }
  return false;
}

/**
 * What every portal request passes before a handler sees it: the Host must be the portal's
 * loopback address (no DNS rebinding), the owner must be signed in (session cookie) or hold the
 * owner token (Bearer), and a state-changing request must come from the portal's own pages: same
 * origin by Origin and Sec-Fetch-Site, with the session's CSRF token.
 */
import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { type PortalEnv, PortalError, SESSION_COOKIE } from "./context.ts";
import { sameSecret } from "./owner_token.ts";
import type { SessionStore } from "./sessions.ts";

const SAFE = new Set(["GET", "HEAD"]);

/** The Host values this portal answers to, for its bound port. */
export function allowedHosts(hostname: string, port: number): Set<string> {
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  hosts.add(`${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`);
  return hosts;
}

/** The middleware that checks the host, the owner and the request's origin. */
export function guard(
  store: SessionStore,
  options: { hosts: Set<string>; token: string },
): MiddlewareHandler<PortalEnv> {
  return async (c, next) => {
    const host = c.req.header("host") ?? "";
    if (!options.hosts.has(host)) {
      throw new PortalError(
        421,
        `this portal answers only at its loopback address, not at ${JSON.stringify(host)}; ` +
          "open the link gurt portal prints; see runbook.md#portal-request-refused",
      );
    }
    c.set("origin", `http://${host}`);
    const path = c.req.path;
    const unsafe = !SAFE.has(c.req.method);
    if (path.startsWith("/static/")) return await next();
    if (unsafe) refuseCrossSite(c);
    if (path === "/login") {
      c.set("session", null);
      return await next();
    }
    const bearer = bearerOf(c);
    if (bearer !== null) {
      if (!sameSecret(bearer, options.token)) {
        throw new PortalError(401, "the owner token is wrong; see runbook.md#portal-login-refused");
      }
      c.set("session", null);
      return await next();
    }
    const session = store.get(getCookie(c, SESSION_COOKIE));
    if (session === undefined) {
      if (!unsafe && !path.startsWith("/api/") && !path.startsWith("/events/")) {
        return c.redirect("/login", 303);
      }
      throw new PortalError(
        401,
        "this request has no signed-in session; open the link gurt portal prints to sign in; " +
          "see runbook.md#portal-login-refused",
      );
    }
    c.set("session", session);
    if (unsafe) {
      const sent = c.req.header("x-csrf-token") ?? await formField(c, "csrf");
      if (sent === null || !sameSecret(sent, session.csrf)) {
        throw new PortalError(
          403,
          "this request does not carry the page's form token, so it may come from another site " +
            "and was refused; reload the page and try again; see runbook.md#portal-request-refused",
        );
      }
    }
    return await next();
  };
}

/** Refuses a state-changing request that a browser says came from another site. */
function refuseCrossSite(c: Context<PortalEnv>): void {
  const site = c.req.header("sec-fetch-site");
  const origin = c.req.header("origin");
  const bearer = bearerOf(c) !== null;
  if (site !== undefined && site !== "same-origin") {
    throw new PortalError(
      403,
      `this request came from another site (Sec-Fetch-Site: ${site}) and was refused; ` +
        "use the portal's own pages; see runbook.md#portal-request-refused",
    );
  }
  if (origin !== undefined && origin !== c.get("origin")) {
    throw new PortalError(
      403,
      `this request came from ${JSON.stringify(origin)}, not from the portal, and was refused; ` +
        "use the portal's own pages; see runbook.md#portal-request-refused",
    );
  }
  if (!bearer && origin === undefined && site === undefined) {
    throw new PortalError(
      403,
      "this request does not say which site sent it (no Origin), so it was refused; use the " +
        "portal in a current browser, or send the owner token; see runbook.md#portal-request-refused",
    );
  }
}

function bearerOf(c: Context<PortalEnv>): string | null {
  const header = c.req.header("authorization");
  if (header === undefined) return null;
  const match = /^Bearer ([^\s]+)$/.exec(header);
  return match === null ? "" : match[1];
}

async function formField(c: Context<PortalEnv>, name: string): Promise<string | null> {
  const type = c.req.header("content-type") ?? "";
  if (!type.startsWith("application/x-www-form-urlencoded") && !type.startsWith("multipart/")) {
    return null;
  }
  const body = await c.req.parseBody();
  const value = body[name];
  return typeof value === "string" ? value : null;
}

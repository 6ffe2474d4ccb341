/** What the portal's routers share: the admin handlers, the CSRF token, form fields. */
import type { Context } from "hono";
import type { BrokerDeps } from "../../broker/mod.ts";
import { type AdminAnswer, type AdminFetch, adminJson } from "../admin_client.ts";
import { type PortalEnv, PortalError } from "../context.ts";

/** What every router is built from. */
export interface RouteDeps {
  deps: BrokerDeps;
  admin: AdminFetch;
}

/** The signed-in session's CSRF token, for the page's forms. */
export function csrf(c: Context<PortalEnv>): string {
  const session = c.get("session");
  if (session === null) {
    throw new PortalError(400, "the pages need a signed-in browser; the owner token works at /api");
  }
  return session.csrf;
}

/** Calls the admin handlers and turns an error answer into the portal's error. */
export async function adminOk(
  admin: AdminFetch,
  request: { method: string; path: string; body?: unknown },
): Promise<AdminAnswer> {
  const answer = await adminJson(admin, request);
  if (answer.status === 200) return answer;
  const status = answer.status === 404 ? 404 : answer.status === 503 ? 503 : 400;
  throw new PortalError(status, errorOf(answer));
}

/** The sentence of an admin error answer. */
export function errorOf(answer: AdminAnswer): string {
  return typeof answer.body?.error === "string" ? answer.body.error : "the core refused it";
}

/** A form field as text (trimmed unless asked not to); "" when absent or a file. */
export function formText(
  form: Record<string, unknown>,
  name: string,
  options: { trim: boolean } = { trim: true },
): string {
  const value = form[name];
  if (typeof value !== "string") return "";
  return options.trim ? value.trim() : value;
}

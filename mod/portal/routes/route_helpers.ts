/** What the portal's routers share: the admin socket, the CSRF token, form fields. */
import type { Context } from "hono";
import type { AdminClient, AdminResult } from "../../admin/mod.ts";
import { type PortalEnv, PortalError } from "../context.ts";

/** What every router is built from. */
export interface RouteDeps {
  admin: AdminClient;
  clock: () => Date;
}

/** The signed-in session's CSRF token, for the page's forms. */
export function csrf(c: Context<PortalEnv>): string {
  const session = c.get("session");
  if (session === null) {
    throw new PortalError(400, "the pages need a signed-in browser; the owner token works at /api");
  }
  return session.csrf;
}

/** The value of an admin answer; a refusal becomes the portal's error, with the core's sentence. */
export function adminOk<T>(answer: AdminResult<T>): T {
  if (answer.ok) return answer.value;
  const status = answer.status === 404 ? 404 : answer.status === 503 ? 503 : 400;
  throw new PortalError(status, answer.error);
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

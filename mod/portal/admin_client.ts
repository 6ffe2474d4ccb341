/**
 * The portal's way to the owner's handlers: it calls the admin app (`adminRoutes`) in-process,
 * with the admin socket's own paths, so the portal and `gurt approve` share one code path.
 */

/** The admin handlers as a fetch function (the Hono app's `fetch`). */
export type AdminFetch = (request: Request) => Response | Promise<Response>;

/** An admin answer: the status and the parsed JSON body. */
export interface AdminAnswer {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** Sends one request to the admin handlers and parses the JSON answer. */
export async function adminJson(
  admin: AdminFetch,
  request: { method: string; path: string; body?: unknown },
): Promise<AdminAnswer> {
  const init: RequestInit = { method: request.method };
  if (request.body !== undefined) {
    init.body = JSON.stringify(request.body);
    init.headers = { "content-type": "application/json" };
  }
  const response = await admin(new Request(`http://gurt.invalid${request.path}`, init));
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text === "" ? null : JSON.parse(text);
  } catch {
    body = { error: text };
  }
  return { status: response.status, body };
}

/** The admin path of an owner API path: `/api/tasks` is `/tasks`; `/api/vault/...` stays. */
export function adminPathOf(apiPath: string): string {
  const rest = apiPath.slice("/api".length);
  return rest === "/vault" || rest.startsWith("/vault/") ? apiPath : rest;
}

/** Forwards an owner API request to the admin handlers, body and all. */
export async function forwardToAdmin(admin: AdminFetch, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const target = `http://gurt.invalid${adminPathOf(url.pathname)}${url.search}`;
  const init: RequestInit = { method: request.method, headers: {} };
  const type = request.headers.get("content-type");
  if (type !== null) init.headers = { "content-type": type };
  if (request.method !== "GET" && request.method !== "HEAD") {
    init.body = await request.arrayBuffer();
  }
  return await admin(new Request(target, init));
}

/**
 * The owner API (`/api/…`): each request goes to the admin socket as it came, and its answer comes
 * back as the core gave it, so the API answers exactly as the socket does.
 */
import type { AdminClient } from "../admin/mod.ts";

/** The admin path of an owner API path: `/api/tasks` is `/tasks`; `/api/vault/...` stays. */
export function adminPathOf(apiPath: string): string {
  const rest = apiPath.slice("/api".length);
  return rest === "/vault" || rest.startsWith("/vault/") ? apiPath : rest;
}

/** Forwards an owner API request to the admin socket, body and all. */
export async function forwardToAdmin(admin: AdminClient, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const hasBody = request.method !== "GET" && request.method !== "HEAD";
  return await admin.forward({
    method: request.method,
    path: `${adminPathOf(url.pathname)}${url.search}`,
    body: hasBody ? new Uint8Array(await request.arrayBuffer()) : undefined,
  });
}

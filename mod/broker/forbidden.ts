/**
 * Each socket answers only its own requests. The task socket refuses the owner's, the admin socket
 * refuses a task's, and both refuse a request of no kind at all: nothing in gurt sends a wrong
 * kind, so one means a bug or a component doing what it should not. The refusal is 403 forbidden,
 * and the connection is closed after it.
 */
import type { Context, Hono } from "hono";
import { HttpError } from "../common/mod.ts";

/** The paths of the owner's requests. */
export const ADMIN_PREFIXES = ["/approvals", "/grants", "/tasks", "/api", "/audit", "/vault"];

/** The paths of a task's requests. */
export const TASK_PATHS = [
  "/task",
  "/tools",
  "/step",
  "/call",
  "/ask",
  "/cost",
  "/usage",
  "/model",
];

/**
 * Makes `app` refuse every request under `paths`, and every request no route answers, with 403
 * forbidden, and log it, naming the `socket` it came on.
 */
export function forbidPaths(
  app: Hono,
  forbidden: { paths: readonly string[]; socket: string; log: (line: string) => void },
): void {
  const { paths, socket, log } = forbidden;
  for (const path of paths) {
    for (const pattern of [path, `${path}/*`]) {
      app.all(pattern, (c) => forbid(c, socket, log));
    }
  }
  app.notFound((c) => forbid(c, socket, log));
}

/** Logs a request of the wrong kind and throws its 403, which closes the connection. */
function forbid(c: Context, socket: string, log: (line: string) => void): never {
  log(`gurt: refused ${c.req.method} ${c.req.path} on ${socket}; see runbook.md#socket-forbidden`);
  throw new HttpError(
    403,
    `forbidden: ${c.req.method} ${c.req.path} is not answered on this socket; see runbook.md#socket-forbidden`,
    "forbidden",
  );
}

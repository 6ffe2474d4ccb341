/**
 * The core's HTTP error: a status and a sentence, answered as `{"error": "…"}`
 * (docs/broker-api.md#errors).
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Thrown by any broker or admin handler; the one error handler turns it into the response. */
export class HttpError extends Error {
  constructor(readonly status: ContentfulStatusCode, message: string, readonly code?: string) {
    super(message);
    this.name = "HttpError";
  }
}

/** The one error handler of the task and admin sockets. */
export function errorResponse(error: Error, c: Context, log: (line: string) => void): Response {
  if (error instanceof HttpError) {
    const body: Record<string, string> = { error: error.message };
    if (error.code !== undefined) body.code = error.code;
    // A forbidden request ends its connection too: nothing more is read from it.
    return c.json(body, error.status, error.code === "forbidden" ? { connection: "close" } : {});
  }
  log(`gurt: ${c.req.method} ${c.req.path} failed inside the core: ${error.message}`);
  return c.json({ error: "the request failed inside gurt" }, 500);
}

/**
 * The core's HTTP error: a status and a sentence, answered as `{"error": "…"}`
 * (docs/broker-api.md#errors).
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { diskFullText, isDiskFull } from "./disk_full.ts";

/** Thrown by any broker or admin handler; the one error handler turns it into the response. */
export class HttpError extends Error {
  constructor(readonly status: ContentfulStatusCode, message: string, readonly code?: string) {
    super(message);
    this.name = "HttpError";
  }
}

/**
 * The one error handler of the task and admin sockets (`app.onError`). An error inside the core is
 * logged with `log` and answered without its message; an HttpError's sentence goes through
 * `redact`, when given, since it may quote what was sent. `refusal` turns an error that is the
 * box's state, not a bug (the audit log unwritable), into its refusal; a full disk is one always.
 */
export function errorHandler(
  options: {
    log: (line: string) => void;
    redact?: (text: string) => string;
    refusal?: (error: Error) => HttpError | null;
  },
): (error: Error, c: Context) => Response {
  return (error, c) => {
    const refused = options.refusal?.(error) ?? diskFullRefusal(error, c);
    if (refused !== null) {
      options.log(`gurt: ${c.req.method} ${c.req.path} refused: ${error.message}`);
      return errorResponse(refused, { c, ...options });
    }
    return errorResponse(error, { c, ...options });
  };
}

/** The 507 of a request that needed a write a full disk refused, else null. */
function diskFullRefusal(error: Error, c: Context): HttpError | null {
  if (error instanceof HttpError || !isDiskFull(error)) return null;
  return new HttpError(
    507,
    diskFullText(`${c.req.method} ${c.req.path} could not be written`, error),
    "disk_full",
  );
}

function errorResponse(
  error: Error,
  options: { c: Context; log: (line: string) => void; redact?: (text: string) => string },
): Response {
  const { c, log, redact } = options;
  if (error instanceof HttpError) {
    const body: Record<string, string> = {
      error: redact === undefined ? error.message : redact(error.message),
    };
    if (error.code !== undefined) body.code = error.code;
    // A forbidden request ends its connection too: nothing more is read from it.
    return c.json(body, error.status, error.code === "forbidden" ? { connection: "close" } : {});
  }
  log(`gurt: ${c.req.method} ${c.req.path} failed inside the core: ${error.message}`);
  return c.json({ error: "the request failed inside gurt" }, 500);
}

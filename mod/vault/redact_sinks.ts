/**
 * The backstop at the places text leaves the core: every audit event (the Decision record's
 * `arguments` included, which are otherwise kept in full: docs/audit.md#a-record), and every JSON
 * answer of the admin socket and owner API.
 */
import type { MiddlewareHandler } from "hono";
import { type AuditAppender, redactValue } from "../common/mod.ts";
import type { AuditEvent } from "../audit/mod.ts";

/** An appender that redacts every string of each event before the inner appender writes it. */
export function redactingAppender(
  inner: AuditAppender,
  redact: (text: string) => string,
): AuditAppender {
  return {
    append: (event, placed) => inner.append(redactValue(event, redact) as AuditEvent, placed),
    get failed() {
      return inner.failed === true;
    },
  };
}

/** Hono middleware: every JSON answer is redacted, every string in it, before it is sent. */
export function redactResponses(redact: (text: string) => string): MiddlewareHandler {
  return async (c, next) => {
    await next();
    const type = c.res.headers.get("content-type") ?? "";
    if (!type.startsWith("application/json")) return;
    const text = await c.res.text();
    let body: string;
    try {
      body = JSON.stringify(redactValue(JSON.parse(text), redact));
    } catch {
      body = redact(text);
    }
    const headers = new Headers(c.res.headers);
    headers.delete("content-length");
    c.res = new Response(body, { status: c.res.status, headers });
  };
}

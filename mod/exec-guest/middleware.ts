/**
 * What every guest route shares: the request id, the CORS allowlist, bearer auth, the JSON body
 * reader (size cap, strict UTF-8), the validation hook, and the one error handler that turns any
 * thrown error into `{"error": {"code", "message", "status"}}`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ZodError } from "zod";
import { readRequestBody } from "../net/mod.ts";
import { GuestError } from "./errors.ts";

/** The variables guest middleware sets on a request's context. */
export interface GuestEnv {
  Variables: {
    requestId: string;
    /**
     * The signal that aborts when the client hangs up. Read it only where needed: Deno prints a
     * one-time notice about its legacy abort behaviour on first access.
     */
    hangup: () => AbortSignal;
  };
}

/** A router whose zod validation failures become 400 invalid_request. */
export function newRouter(): OpenAPIHono<GuestEnv> {
  return new OpenAPIHono<GuestEnv>({ defaultHook: validationHook });
}

/** A zod failure as 400 invalid_request naming each bad field; every guest router uses it. */
export function validationHook(
  result: { success: true } | { success: false; error: ZodError },
): void {
  if (result.success) return;
  const problems = result.error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "the request";
    return `${where}: ${issue.message}`;
  });
  throw new GuestError("invalid_request", 400, `invalid request: ${problems.join("; ")}`);
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a well-formed `x-request-id`, or mints one; records the hang-up signal. */
export function requestId(): MiddlewareHandler<GuestEnv> {
  return async (c, next) => {
    const sent = c.req.header("x-request-id");
    const id = sent !== undefined && REQUEST_ID.test(sent) ? sent : crypto.randomUUID();
    c.set("requestId", id);
    const raw = c.req.raw;
    c.set("hangup", () => raw.signal);
    c.header("x-request-id", id);
    await next();
    c.res.headers.set("x-request-id", id);
  };
}

/** CORS for the listed origins only; with an empty list no CORS header is ever sent. */
export function corsAllowlist(origins: string[]): MiddlewareHandler<GuestEnv> {
  const allowed = new Set(origins);
  const middleware = cors({
    origin: (origin) => allowed.has(origin) ? origin : null,
    allowHeaders: ["Authorization", "Content-Type", "X-Request-Id"],
    allowMethods: ["GET", "POST", "PUT", "DELETE", "OPTIONS"],
    exposeHeaders: ["X-Request-Id", "X-Exec-Id"],
    maxAge: 600,
  });
  return async (c, next) => {
    if (allowed.size === 0) return await next();
    return await middleware(c, next);
  };
}

/** Bearer auth with a constant-time compare; `open` paths (GET /v1/health) pass without it. */
export function bearerAuth(token: string, open: string[]): MiddlewareHandler<GuestEnv> {
  const expected = digest(token);
  const openPaths = new Set(open);
  return async (c, next) => {
    if (openPaths.has(c.req.path) && c.req.method === "GET") return await next();
    const header = c.req.header("authorization") ?? "";
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const given = digest(match ? match[1] : "");
    if (!match || !timingSafeEqual(given, expected)) {
      c.header("www-authenticate", 'Bearer realm="gurt-guest"');
      throw new GuestError("unauthorized", 401, "missing or invalid bearer token");
    }
    await next();
  };
}

/** SHA-256 first gives both sides the same length, so the compare never leaks the length. */
function digest(text: string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(text).digest());
}

const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;.*)?$/i;

/**
 * Reads a JSON request body once, before validation: larger than `limit` bytes is 413
 * payload_too_large, invalid UTF-8 is 400 invalid_request. Other bodies pass untouched.
 */
export function jsonBody(limit: number): MiddlewareHandler<GuestEnv> {
  return async (c, next) => {
    const type = c.req.header("content-type");
    const body = c.req.raw.body;
    if (body === null || type === undefined || !JSON_TYPE.test(type)) return await next();
    const bytes = await readCapped(c.req.raw, limit);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new GuestError("invalid_request", 400, "the request body is not valid UTF-8");
    }
    // Hono's request reads its body from this cache (it holds promises at run time, whatever its
    // declared type says); the validator then parses the same bytes. Building a new Request
    // instead would touch request.signal, which makes Deno print its legacy-abort notice.
    const cache = c.req.bodyCache as unknown as CachedBody;
    cache.text = Promise.resolve(text);
    cache.arrayBuffer = Promise.resolve(bytes.buffer);
    await next();
  };
}

/** What jsonBody leaves in Hono's body cache. */
export interface CachedBody {
  text?: Promise<string>;
  arrayBuffer?: Promise<ArrayBuffer>;
}

/** Reads a request's body whole, or throws 413 payload_too_large past `limit` bytes. */
export function readCapped(request: Request, limit: number): Promise<Uint8Array<ArrayBuffer>> {
  return readRequestBody(request, {
    limit,
    tooLarge: () =>
      new GuestError(
        "payload_too_large",
        413,
        `the request body is larger than the limit of ${limit} bytes`,
      ),
  });
}

/** The one error handler: every error becomes the seed's error object. */
export function onGuestError(error: Error, c: Context<GuestEnv>): Response {
  const guest = asGuestError(error);
  if (guest.code === "internal") {
    console.error(`gurt guest: internal error: ${error.name}: ${error.message}`);
  }
  return respondError(c, guest);
}

/** Unknown routes: 404 not_found in the same shape. */
export function onGuestNotFound(c: Context<GuestEnv>): Response {
  return respondError(
    c,
    new GuestError("not_found", 404, `no route ${c.req.method} ${c.req.path}`),
  );
}

function respondError(c: Context<GuestEnv>, error: GuestError): Response {
  const id = c.get("requestId");
  if (id !== undefined) c.header("x-request-id", id);
  return c.json(error.body(), error.status as ContentfulStatusCode);
}

function asGuestError(error: unknown): GuestError {
  if (error instanceof GuestError) return error;
  if (error instanceof HTTPException) {
    if (error.status === 413) {
      return new GuestError("payload_too_large", 413, "the request body is too large");
    }
    if (error.status === 401) {
      return new GuestError("unauthorized", 401, "missing or invalid bearer token");
    }
    if (error.status === 415) {
      return new GuestError(
        "invalid_request",
        415,
        "the request body must be sent as Content-Type: application/json",
      );
    }
    if (error.status < 500) {
      const message = error.message === "Malformed JSON in request body"
        ? "the request body is not valid JSON"
        : error.message || "invalid request";
      return new GuestError("invalid_request", error.status, message);
    }
  }
  return new GuestError("internal", 500, "the guest failed while handling this request");
}

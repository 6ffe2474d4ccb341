/** The exec routes' schemas: each validates its input, types its handler and feeds openapi.yaml. */
import { z } from "@hono/zod-openapi";

/** The seed's error object, shared by every route's error responses. */
export const ErrorBody = z.object({
  error: z.object({
    code: z.string().openapi({ example: "invalid_request" }),
    message: z.string(),
    status: z.number().int(),
  }),
}).openapi("Error");

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** POST /v1/exec and /v1/exec/stream. */
export const ExecRequest = z.strictObject({
  command: z.union([
    z.string().min(1).max(1_000_000).openapi({ description: "run as /bin/sh -c <command>" }),
    z.array(z.string().max(1_000_000)).min(1).max(100_000),
  ]).openapi({ example: ["echo", "ok"] }),
  cwd: z.string().optional().openapi({
    description: "relative to the workspace or absolute under it; jail-checked",
  }),
  timeout_ms: z.number().int().positive().optional().openapi({
    description: "default BOX_DEFAULT_TIMEOUT_MS (30000), at most BOX_MAX_TIMEOUT_MS (600000)",
  }),
  env: z.record(z.string().regex(ENV_NAME), z.string()).optional(),
  stdin: z.string().nullable().optional().openapi({
    description: "written to the child, then the pipe is closed",
  }),
  detach: z.boolean().optional().openapi({
    description: "answer at once with status running; poll GET /v1/exec/{id}",
  }),
  pty: z.boolean().optional().openapi({ description: "not implemented: true is a 400" }),
}).openapi("ExecRequest");

/** The type of an exec request body. */
export type ExecRequestBody = z.infer<typeof ExecRequest>;

const Finish = {
  exec_id: z.string(),
  exit_code: z.number().int().nullable(),
  timed_out: z.boolean(),
  duration_ms: z.number().int(),
  truncated: z.boolean().openapi({
    description: "true when stdout or stderr passed BOX_MAX_OUTPUT_BYTES and was cut, or when " +
      "output_complete is false",
  }),
  output_complete: z.boolean().openapi({
    description: "false when a process the command left running (a background job) still held " +
      "its stdout or stderr 100 ms after the command exited: the guest stopped reading, and " +
      "what that process writes later is not in the answer; redirect a background job's " +
      "output (`job >/dev/null 2>&1 &`) to keep this true",
  }),
  cwd: z.string(),
};

const Outcome = { ...Finish, stdout: z.string(), stderr: z.string() };

/** The answer of a finished POST /v1/exec. */
export const ExecResult = z.object(Outcome).openapi("ExecResult");

/** The answer of POST /v1/exec with detach: true. */
export const ExecStarted = z.object({
  exec_id: z.string(),
  status: z.literal("running"),
  cwd: z.string(),
}).openapi("ExecStarted");

/** GET /v1/exec/{id}: the exec so far; output from the `since` byte offsets on. */
export const ExecStatus = z.object({
  ...Outcome,
  status: z.enum(["running", "exited"]),
  stdout_next: z.number().int().openapi({ description: "pass as since to read only new stdout" }),
  stderr_next: z.number().int().openapi({
    description: "pass as stderr_since to read only new stderr",
  }),
}).openapi("ExecStatus", {
  description: "While status is running, exit_code is null, output_complete is false and " +
    "duration_ms is the time it has run so far; once exited, the fields mean what they mean in " +
    "ExecResult.",
});

/** The query of GET /v1/exec/{id}. */
export const ExecStatusQuery = z.strictObject({
  since: z.string().regex(/^[0-9]{1,15}$/).optional().openapi({
    description: "byte offset into stdout (and stderr, unless stderr_since is given)",
  }),
  stderr_since: z.string().regex(/^[0-9]{1,15}$/).optional(),
});

/** The path parameter of /v1/exec/{id}. */
export const ExecIdParam = z.object({
  id: z.string().min(1).max(128).openapi({ param: { name: "id", in: "path" } }),
});

/** DELETE /v1/exec/{id}. */
export const ExecCancelled = z.object({
  exec_id: z.string(),
  cancelled: z.boolean(),
}).openapi("ExecCancelled");

/** One event of POST /v1/exec/stream (a line of NDJSON, or an SSE event of the same name). */
export const StreamEvent = z.union([
  z.object({ type: z.enum(["stdout", "stderr"]), data: z.string() }),
  z.object({ ...Finish, type: z.literal("exit") }),
]).openapi("ExecStreamEvent");

/** GET /v1/info on the exec service: slots, uptime and counters. */
export const ExecInfo = z.object({
  service: z.literal("box-exec"),
  protocol: z.literal("v1"),
  version: z.string(),
  workspace: z.string(),
  uptime_ms: z.number().int(),
  slots: z.object({
    max: z.number().int(),
    in_use: z.number().int(),
    running: z.array(z.string()).openapi({ description: "the ids of the execs holding a slot" }),
  }),
  counters: z.object({
    started: z.number().int(),
    finished: z.number().int(),
    timed_out: z.number().int(),
    cancelled: z.number().int(),
    busy: z.number().int(),
  }),
}).openapi("ExecInfo");

/** GET /v1/health. */
export const Health = z.object({ status: z.literal("ok") }).openapi("Health");

/** POST /v1/shutdown. */
export const ShutdownAccepted = z.object({ status: z.literal("shutting_down") }).openapi(
  "ShutdownAccepted",
);

/** The error responses every authenticated route may give. */
export function errorResponses(
  statuses: number[],
): Record<
  number,
  { description: string; content: { "application/json": { schema: typeof ErrorBody } } }
> {
  const out: Record<
    number,
    { description: string; content: { "application/json": { schema: typeof ErrorBody } } }
  > = {};
  for (const status of statuses) {
    out[status] = {
      description: DESCRIPTIONS[status] ?? "error",
      content: { "application/json": { schema: ErrorBody } },
    };
  }
  return out;
}

const DESCRIPTIONS: Record<number, string> = {
  400: "invalid_request, path_escape or exec_failed",
  401: "unauthorized: missing or invalid bearer token",
  404: "not_found",
  409: "invalid_request: the path exists, or changed while the guest was using it (try again)",
  413: "payload_too_large",
  429: "busy: every exec slot is in use",
  500: "io_error or internal",
  503: "not_ready: for /v1/ready, the exec service or display is down; for /v1/files, the " +
    "files helper cannot run here",
};

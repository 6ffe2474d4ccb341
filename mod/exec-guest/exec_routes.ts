/** The exec routes: POST /v1/exec, POST /v1/exec/stream, GET and DELETE /v1/exec/{id}. */
import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { GuestError } from "./errors.ts";
import type { ExecOutcome, ExecSpec } from "./exec_process.ts";
import type { ExecRecord, ExecRegistry } from "./exec_registry.ts";
import {
  errorResponses,
  ExecCancelled,
  ExecIdParam,
  ExecRequest,
  type ExecRequestBody,
  ExecResult,
  ExecStarted,
  ExecStatus,
  ExecStatusQuery,
  StreamEvent,
} from "./exec_schemas.ts";
import type { Jail } from "./jail.ts";
import { jsonWithOutputs } from "./json_stream.ts";
import { type GuestEnv, newRouter } from "./middleware.ts";
import { SECRET_ENV } from "./settings.ts";

/** What the exec routes run with. */
export interface ExecDeps {
  jail: Jail;
  registry: ExecRegistry;
  /** The daemon's environment with the token variables already removed. */
  baseEnv: Record<string, string>;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  killGraceMs: number;
  maxOutputBytes: number;
  /** The session helper `gurt guest` wrote (session_helper.ts), or null for util-linux setsid. */
  sessionHelper?: string | null;
}

const json = <T>(schema: T) => ({ content: { "application/json": { schema } } });

const runRoute = createRoute({
  method: "post",
  path: "/",
  summary: "Run a command and answer when it ends (or at once with detach: true)",
  request: { body: { ...json(ExecRequest), required: true } },
  responses: {
    200: {
      description: "the finished exec, or with detach: true the started one",
      content: { "application/json": { schema: ExecResult.or(ExecStarted) } },
    },
    ...errorResponses([400, 401, 404, 413, 429]),
  },
});

const streamRoute = createRoute({
  method: "post",
  path: "/stream",
  summary: "Run a command and stream stdout/stderr chunks, then the exit event",
  request: { body: { ...json(ExecRequest), required: true } },
  responses: {
    200: {
      description: "NDJSON (or SSE with Accept: text/event-stream) of ExecStreamEvent",
      headers: { "x-exec-id": { schema: { type: "string" } } },
      content: {
        "application/x-ndjson": { schema: StreamEvent },
        "text/event-stream": { schema: StreamEvent },
      },
    },
    ...errorResponses([400, 401, 404, 413, 429]),
  },
});

const statusRoute = createRoute({
  method: "get",
  path: "/{id}",
  summary: "An exec's state and output, only from the given byte offsets on",
  request: { params: ExecIdParam, query: ExecStatusQuery },
  responses: {
    200: { description: "the exec", ...json(ExecStatus) },
    ...errorResponses([400, 401, 404]),
  },
});

const cancelRoute = createRoute({
  method: "delete",
  path: "/{id}",
  summary: "Stop an exec: SIGTERM to its process group, SIGKILL after the grace",
  request: { params: ExecIdParam },
  responses: {
    200: { description: "cancelled: false if it had already finished", ...json(ExecCancelled) },
    ...errorResponses([401, 404]),
  },
});

/** The /v1/exec router. */
export function execRouter(deps: ExecDeps): OpenAPIHono<GuestEnv> {
  const router = newRouter();

  router.openapi(runRoute, async (c) => {
    const body = c.req.valid("json");
    const spec = await prepare(body, deps);
    const record = deps.registry.start(spec);
    if (body.detach === true) {
      return c.json({ exec_id: record.id, status: "running" as const, cwd: record.cwd }, 200);
    }
    const hangup = c.get("hangup")();
    const onHangup = () => record.process.stop("hangup");
    hangup.addEventListener("abort", onHangup);
    if (hangup.aborted) onHangup();
    try {
      const outcome = await record.process.done;
      const failure = record.process.launchFailure(outcome);
      if (failure !== undefined) {
        const program = JSON.stringify(spec.argv[0]);
        throw new GuestError("exec_failed", 400, `cannot run ${program}: ${failure}`);
      }
      // The answer is the ExecResult schema, streamed; its type is that of a c.json answer.
      return resultResponse(record, outcome) as unknown as ReturnType<typeof c.json<never, 200>>;
    } finally {
      hangup.removeEventListener("abort", onHangup);
    }
  });

  router.openapi(streamRoute, async (c) => {
    const body = c.req.valid("json");
    if (body.detach === true) {
      throw new GuestError("invalid_request", 400, "detach is for POST /v1/exec, not the stream");
    }
    const spec = await prepare(body, deps);
    const sse = (c.req.header("accept") ?? "").includes("text/event-stream");
    const encoder = new TextEncoder();
    const frame = (event: Record<string, unknown>): Uint8Array =>
      encoder.encode(
        sse
          ? `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
          : `${JSON.stringify(event)}\n`,
      );
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const holder: { record?: ExecRecord } = {};
    const stream = new ReadableStream<Uint8Array>({
      start(ctl) {
        controller = ctl;
      },
      cancel() {
        holder.record?.process.stop("hangup");
      },
    });
    const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
    const send = (event: Record<string, unknown>) => {
      try {
        controller.enqueue(frame(event));
      } catch {
        // The client hung up; the cancel above stops the process group.
      }
    };
    const started = deps.registry.start(spec, (name, bytes) => {
      const data = decoders[name].decode(bytes, { stream: true });
      if (data !== "") send({ type: name, data });
    });
    holder.record = started;
    const hangup = c.get("hangup")();
    const onHangup = () => started.process.stop("hangup");
    hangup.addEventListener("abort", onHangup);
    if (hangup.aborted) onHangup();
    started.process.done.then((outcome) => {
      hangup.removeEventListener("abort", onHangup);
      for (const name of ["stdout", "stderr"] as const) {
        const rest = decoders[name].decode();
        if (rest !== "") send({ type: name, data: rest });
      }
      send({ type: "exit", ...outcomeFields(started, outcome) });
      try {
        controller.close();
      } catch {
        // Already cancelled by the client.
      }
    });
    return new Response(stream, {
      status: 200,
      headers: {
        "content-type": sse ? "text/event-stream" : "application/x-ndjson",
        "cache-control": "no-cache",
        "x-exec-id": started.id,
      },
    });
  });

  router.openapi(statusRoute, (c) => {
    const { id } = c.req.valid("param");
    const query = c.req.valid("query");
    const record = deps.registry.get(id);
    const since = Number(query.since ?? "0");
    const stderrSince = query.stderr_since === undefined ? since : Number(query.stderr_since);
    const process = record.process;
    const outcome = record.outcome;
    const response = jsonWithOutputs(
      {
        stdout: { buffer: process.stdout, since },
        stderr: { buffer: process.stderr, since: stderrSince },
      },
      {
        head: { exec_id: record.id, status: outcome === undefined ? "running" : "exited" },
        tail: {
          exit_code: outcome?.exit_code ?? null,
          timed_out: outcome?.timed_out ?? false,
          duration_ms: outcome?.duration_ms ?? process.elapsedMs(),
          truncated: outcome?.truncated ?? (process.stdout.truncated || process.stderr.truncated),
          output_complete: outcome?.output_complete ?? false,
          cwd: record.cwd,
          stdout_next: process.stdout.length,
          stderr_next: process.stderr.length,
        },
      },
    );
    return response as unknown as ReturnType<typeof c.json<never, 200>>;
  });

  router.openapi(cancelRoute, (c) => {
    const { id } = c.req.valid("param");
    const cancelled = deps.registry.cancel(id);
    return c.json({ exec_id: id, cancelled }, 200);
  });

  return router;
}

/** The answer of a finished exec, streamed so that large output is never one string. */
function resultResponse(record: ExecRecord, outcome: ExecOutcome): Response {
  const { exec_id, ...tail } = outcomeFields(record, outcome);
  return jsonWithOutputs(
    {
      stdout: { buffer: record.process.stdout, since: 0 },
      stderr: { buffer: record.process.stderr, since: 0 },
    },
    { head: { exec_id }, tail },
  );
}

/** Everything an answer says about a finished exec but its output. */
function outcomeFields(record: ExecRecord, outcome: ExecOutcome) {
  return {
    exec_id: record.id,
    exit_code: outcome.exit_code,
    timed_out: outcome.timed_out,
    duration_ms: outcome.duration_ms,
    truncated: outcome.truncated,
    output_complete: outcome.output_complete,
    cwd: record.cwd,
  };
}

/** Turns a validated request into a runnable spec: argv, jail-checked cwd, environment, limits. */
async function prepare(body: ExecRequestBody, deps: ExecDeps): Promise<ExecSpec> {
  if (body.pty === true) {
    throw new GuestError(
      "invalid_request",
      400,
      "pty: true is not implemented; use POST /v1/exec/stream for incremental output",
    );
  }
  const timeoutMs = body.timeout_ms ?? Math.min(deps.defaultTimeoutMs, deps.maxTimeoutMs);
  if (timeoutMs > deps.maxTimeoutMs) {
    throw new GuestError(
      "invalid_request",
      400,
      `timeout_ms may be at most ${deps.maxTimeoutMs} (BOX_MAX_TIMEOUT_MS), got ${timeoutMs}`,
    );
  }
  const argv = typeof body.command === "string" ? ["/bin/sh", "-c", body.command] : body.command;
  if (argv.some((arg) => arg.includes("\0")) || argv[0] === "") {
    throw new GuestError(
      "invalid_request",
      400,
      "command may not be empty or contain a NUL byte",
    );
  }
  const cwd = await deps.jail.existing(body.cwd ?? "");
  // Sync: a local stat is a few microseconds, the async one's thread-pool hop ten times that.
  const info = Deno.statSync(cwd);
  if (!info.isDirectory) {
    throw new GuestError(
      "invalid_request",
      400,
      `cwd ${JSON.stringify(body.cwd)} is not a directory`,
    );
  }
  const env: Record<string, string> = { ...deps.baseEnv, PWD: cwd };
  for (const [name, value] of Object.entries(body.env ?? {})) {
    if (value.includes("\0")) {
      throw new GuestError("invalid_request", 400, `env.${name} may not contain a NUL byte`);
    }
    if (!SECRET_ENV.includes(name)) env[name] = value;
  }
  return {
    argv,
    cwd,
    env,
    stdin: body.stdin === undefined || body.stdin === null
      ? null
      : new TextEncoder().encode(body.stdin),
    timeoutMs,
    killGraceMs: deps.killGraceMs,
    maxOutputBytes: deps.maxOutputBytes,
    sessionHelper: deps.sessionHelper ?? null,
  };
}

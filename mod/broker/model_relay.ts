/**
 * The model relay on the task socket: `GET /model` tells the worker which model and wire format to
 * speak, `POST /model` carries one model request. The core adds the key from the vault, sends the
 * request only to the configured service, passes the answer (streamed or not) back, and records
 * the tokens it used, priced as /usage prices them. The key never reaches the worker.
 */
import type { Hono } from "hono";
import { AnswerUnreadable, redactingAnswerStream, unreadableMessage } from "./answer_redactor.ts";
import { redactWholeAnswer } from "./whole_answer.ts";
import type { BrokerDeps, TaskContext } from "./deps.ts";
import { HttpError } from "../common/mod.ts";
import { readRequestBody } from "../net/mod.ts";
import { priceUsage, type TokenCounts } from "./pricing.ts";
import { usageOfAnswer, usageOfStream } from "./model_usage.ts";

/** The message for a box with no model key, with where to look. */
export function noModelKeyMessage(keyName: string): string {
  return `No model key yet. Add an Anthropic or Factory API key in Settings, Accounts & Keys, then start the task again. gurt reads the vault key ${keyName}, named by gurt.toml [models] key (gurt vault set ${keyName}, or the portal's Accounts & Keys); see runbook.md#model-key-missing`;
}

/** What the model relay uses: the [models] settings, the key in the vault, the redaction. */
export type RelayDeps = Pick<BrokerDeps, "config" | "vault" | "redaction" | "shutdown" | "log">;

/** The model a task's loop uses: the task's own, else the configuration's default. */
export function taskModel(ctx: TaskContext<Pick<BrokerDeps, "config">>): string {
  const worker = ctx.task.record.worker;
  return worker.kind === "loop" && worker.model !== null
    ? worker.model
    : ctx.deps.config.models.model;
}

/** Why a model request cannot be sent now (no key in the vault), or null when it can. */
export function modelKeyProblem(deps: Pick<BrokerDeps, "config" | "vault">): string | null {
  const name = deps.config.models.key;
  if (name === "") return null;
  return deps.vault.value(name) === undefined ? noModelKeyMessage(name) : null;
}

/** Adds GET /model and POST /model to a task's app. */
export function addModelRoutes(app: Hono, relay: RelayOptions): void {
  const { deps, task } = relay;
  const most = deps.config.broker.max_model_requests;
  app.get("/model", (c) =>
    c.json({
      kind: deps.config.models.kind,
      model: taskModel(relay),
      maxTokens: deps.config.models.max_tokens,
      maxTurns: deps.config.models.max_turns,
    }));

  app.post("/model", async (c) => {
    // Refused before its body is read: a task may not hold more of the core than this at once.
    if (task.modelRequests >= most) {
      throw new HttpError(
        429,
        `this task already has ${most} model requests under way, the most gurt.toml [broker] max_model_requests allows; wait for one to end; see runbook.md#model-requests-limit`,
        "too_many_model_requests",
      );
    }
    task.modelRequests++;
    let held = true;
    const release = () => {
      if (held) task.modelRequests--;
      held = false;
    };
    try {
      return await relayModel(relay, { raw: c.req.raw, release });
    } catch (error) {
      release();
      throw error;
    }
  });
}

/** What the model relay needs of the core and of its task's app. */
interface RelayOptions extends TaskContext<RelayDeps> {
  /** Reads a request's body, drawing on the task's byte total like every other body. */
  body: (request: Request) => Promise<Uint8Array>;
  charge: (cents: number, model: string) => Promise<void>;
}

/** Relays one model request; `release` is called once its answer has ended, or it failed. */
async function relayModel(
  options: RelayOptions,
  incoming: { raw: Request; release: () => void },
): Promise<Response> {
  const { deps, task } = options;
  const bytes = await options.body(incoming.raw);
  const request = parseModelRequest(bytes, deps.config.models.kind);
  const problem = modelKeyProblem(deps);
  if (problem !== null) throw new HttpError(503, problem, "no_model_key");
  const model = taskModel(options);
  const { kind, base_url: base, key } = deps.config.models;
  const body: Record<string, unknown> = { ...request, model };
  if (kind === "openai" && body.stream === true) {
    body.stream_options = { include_usage: true };
  }
  const headers: Record<string, string> = { "content-type": "application/json" };
  const value = key === "" ? undefined : deps.vault.value(key);
  if (kind === "anthropic") {
    headers["anthropic-version"] = "2023-06-01";
    if (value !== undefined) headers["x-api-key"] = value;
  } else if (value !== undefined) {
    headers.authorization = `Bearer ${value}`;
  }
  const url = `${base.replace(/\/$/, "")}${
    kind === "anthropic" ? "/v1/messages" : "/v1/chat/completions"
  }`;
  let upstream: Response;
  try {
    upstream = await fetch(url, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
      // The requester going away, or the core closing, ends the upstream request.
      signal: AbortSignal.any([incoming.raw.signal, deps.shutdown]),
    });
  } catch (error) {
    deps.log(`gurt: the model service at ${url} cannot be reached: ${describe(error)}`);
    throw new HttpError(502, `the model service at ${base} cannot be reached`);
  }
  const record = (tokens: TokenCounts | null) => {
    if (tokens === null) return Promise.resolve();
    const cents = priceUsage(model, tokens) ?? 0;
    return options.charge(cents, model).catch((error) =>
      deps.log(`gurt: the model usage of task ${task.id} could not be recorded: ${error}`)
    );
  };
  const type = upstream.headers.get("content-type") ?? "application/json";
  const redaction = deps.redaction();
  if (!upstream.ok || !type.includes("text/event-stream") || upstream.body === null) {
    // A whole answer, an error's included, redacted as a worker reads it. One that cannot be read
    // so (not JSON, say) is refused, since its text could spell a value no redaction would see.
    // The request's slot is free once the answer is read (or refused for its length).
    const body = readRequestBody(upstream, {
      limit: MOST_WHOLE_ANSWER,
      tooLarge: () =>
        new AnswerUnreadable(`it is longer than ${MOST_WHOLE_ANSWER / 1024 / 1024} MiB`),
    }).finally(incoming.release);
    let text: string;
    try {
      text = redactWholeAnswer(new TextDecoder().decode(await body), { redaction, kind });
    } catch (error) {
      if (!(error instanceof AnswerUnreadable)) throw error;
      deps.log(
        `gurt: the model answer of task ${task.id} (status ${upstream.status}) was refused: ${error.message}`,
      );
      throw new HttpError(
        502,
        unreadableMessage(
          kind === "anthropic" ? "an Anthropic Messages answer" : "an OpenAI chat completion",
          `${error.message}, status ${upstream.status}`,
        ),
        "model_answer_unreadable",
      );
    }
    if (upstream.ok) await record(usageOfAnswer(kind, text));
    return new Response(text, { status: upstream.status, headers: { "content-type": type } });
  }
  const { relayed, copy } = relayWithCopy(upstream.body);
  // Recorded after the answer has gone; the task's journal stays open until it is.
  task.trail(
    usageOfStream(kind, copy).then(
      record,
      (error) =>
        deps.log(`gurt: the model answer of task ${task.id} was cut off: ${describe(error)}`),
    ),
  );
  // What reaches the worker is redacted as the worker will read it: event by event, each text it
  // joins as one stream, escapes decoded; an event that cannot be read so ends the answer.
  // The request's slot is free once the answer has ended, whole or cut off.
  const redacted = redactingAnswerStream(redaction, {
    kind,
    choices: Number.isSafeInteger(request.n) && (request.n as number) >= 1
      ? request.n as number
      : 1,
    cut: (reason) => deps.log(`gurt: the model answer of task ${task.id} was cut off: ${reason}`),
  });
  const answer = relayed.pipeThrough(redacted).pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({ flush: incoming.release }),
  );
  return new Response(releasingOnCancel(answer, incoming.release), {
    status: 200,
    headers: { "content-type": type },
  });
}

/** `stream`, calling `release` too when its reader cancels it (the worker went away). */
function releasingOnCancel(
  stream: ReadableStream<Uint8Array>,
  release: () => void,
): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    async cancel(reason) {
      release();
      await reader.cancel(reason).catch(() => {});
    },
  });
}

/**
 * Reads the worker's model request. The service must not fetch anything for the task
 * (docs/broker-api.md#get-model-and-post-model-the-model-relay): no MCP servers, and only the
 * task's own function tools.
 */
function parseModelRequest(
  bytes: Uint8Array,
  kind: "anthropic" | "openai",
): Record<string, unknown> {
  let request: unknown;
  try {
    request = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new HttpError(400, "the model request is not JSON");
  }
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    throw new HttpError(400, "the model request must be a JSON object");
  }
  const fields = request as Record<string, unknown>;
  if (!Array.isArray(fields.messages)) {
    throw new HttpError(400, "the model request must have a messages array");
  }
  if ("mcp_servers" in fields) {
    throw new HttpError(403, "a model request may not name MCP servers for the service to reach");
  }
  const tools = fields.tools ?? [];
  if (!Array.isArray(tools)) throw new HttpError(400, "tools must be an array");
  for (const tool of tools as Record<string, unknown>[]) {
    const own = kind === "anthropic"
      ? tool.type === undefined || tool.type === "custom"
      : tool.type === "function";
    if (!own) {
      throw new HttpError(
        403,
        `the model request offers the tool type ${
          JSON.stringify(tool.type)
        }, which the service would run outside the box; only the task's own tools may be offered`,
      );
    }
  }
  return fields;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Passes a body through while a copy of it is read for usage. Unlike tee(), cancelling the relayed
 * stream (the worker went away) cancels the source too and ends the copy: a tee waits for both
 * branches, so a held upstream would keep the request, and the core's shutdown, waiting for ever.
 */
function relayWithCopy(
  source: ReadableStream<Uint8Array>,
): { relayed: ReadableStream<Uint8Array>; copy: ReadableStream<Uint8Array> } {
  const reader = source.getReader();
  let copyController!: ReadableStreamDefaultController<Uint8Array>;
  const copy = new ReadableStream<Uint8Array>({ start: (c) => (copyController = c) });
  const endCopy = () => {
    try {
      copyController.close();
    } catch {
      // already closed
    }
  };
  const relayed = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) {
          endCopy();
          controller.close();
          return;
        }
        copyController.enqueue(value);
        controller.enqueue(value);
      } catch (error) {
        copyController.error(error);
        controller.error(error);
      }
    },
    cancel(reason) {
      endCopy();
      return reader.cancel(reason);
    },
  });
  return { relayed, copy };
}

/** The longest whole (not streamed) answer the relay reads: a model's answer is far shorter. */
const MOST_WHOLE_ANSWER = 16 * 1024 * 1024;

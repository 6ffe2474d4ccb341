/**
 * A scripted fake of OpenAI's Responses service for the agent tests (Codex CLI, and Droid on an
 * OpenAI model): a real HTTP server on 127.0.0.1 that records every request (method, path, headers,
 * body) and answers `POST …/responses` in the service's own wire format, streamed as server-sent
 * events when asked (as Codex always does) or whole.
 *
 * The script (`responsesTurn`, pure): when the last input item is a tool's result, answer the text
 * `FINAL: <that result's text>`, except that a result asking to call the tool again (gurt's pending
 * text) is answered by the same call again, `retries` times; otherwise call the first offered tool
 * whose name contains `example__echo` with `{"text": "hi from <agent>"}` (an MCP tool Codex offers
 * inside a `{"type":"namespace","name":"mcp__box","tools":[…]}` entry is called back as a
 * function_call with that namespace); with no such tool, answer `NO-TOOL`. With `shell`, the first
 * turn asks the agent's shell tool (`exec_command`, else `shell`) to run that command instead.
 */

/** One request as the fake received it. */
export interface FakeRequest {
  method: string;
  /** The path and its query, as asked for. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** How the fake plays its part. */
export interface FakeResponsesOptions {
  /** Named in the echo call's text: `hi from <agent>`. */
  agent: string;
  /** How many times a pending result is answered by calling the tool again (default 1). */
  retries?: number;
  /** A command the first turn asks the agent's shell tool to run (instead of the echo call). */
  shell?: string;
}

/** The usage every answer reports. */
export const FAKE_USAGE = { input: 100_000, cached: 20_000, output: 2_000 };

/** The words of gurt's pending answer that ask the agent to call again. */
export const PENDING_WORDS = "Call this tool again";

/** What the fake answers to one request body. */
export type Turn =
  | { kind: "call"; name: string; namespace: string | null; arguments: Record<string, unknown> }
  | { kind: "text"; text: string };

/** A running fake. */
export interface FakeResponses {
  /** Its origin, e.g. http://127.0.0.1:4321 (an OpenAI base URL is this + "/v1"). */
  url: string;
  requests: FakeRequest[];
  /** The requests' parsed bodies that went to a responses path. */
  turns(): Record<string, unknown>[];
  close(): Promise<void>;
}

type Item = Record<string, unknown>;

/** The text of a tool result's output: a string, or the text of its input_text items. */
export function resultText(output: unknown): string {
  if (typeof output === "string") return output;
  if (!Array.isArray(output)) return JSON.stringify(output);
  const texts = output
    .filter((part): part is { text: string } => typeof part?.text === "string")
    .map((part) => part.text);
  // Codex puts "Wall time: … seconds\nOutput:" before an MCP tool's result.
  const kept = texts.filter((text) => !/^Wall time: .*\nOutput:$/s.test(text));
  return kept.join("\n");
}

function offeredTool(tools: unknown): { name: string; namespace: string | null } | null {
  if (!Array.isArray(tools)) return null;
  for (const tool of tools as Item[]) {
    if (tool.type === "namespace" && Array.isArray(tool.tools)) {
      for (const inner of tool.tools as Item[]) {
        if (typeof inner.name === "string" && inner.name.includes("example__echo")) {
          return { name: inner.name, namespace: String(tool.name) };
        }
      }
    } else if (typeof tool.name === "string" && tool.name.includes("example__echo")) {
      return { name: tool.name, namespace: null };
    }
  }
  return null;
}

function shellTool(tools: unknown): string | null {
  if (!Array.isArray(tools)) return null;
  const names = (tools as Item[]).map((tool) => tool.name);
  return ["exec_command", "shell"].find((name) => names.includes(name)) ?? null;
}

/** The script: what the fake answers to a Responses request body. */
export function responsesTurn(body: Item, options: FakeResponsesOptions): Turn {
  const input: Item[] = Array.isArray(body.input) ? body.input as Item[] : [];
  const last = input.at(-1);
  if (last !== undefined && String(last.type ?? "").endsWith("_output")) {
    const text = resultText(last.output);
    const pending = input.filter((item) =>
      String(item.type ?? "").endsWith("_output") && resultText(item.output).includes(PENDING_WORDS)
    ).length;
    if (text.includes(PENDING_WORDS) && pending <= (options.retries ?? 1)) {
      const call = input.find((item) =>
        item.type === "function_call" && item.call_id === last.call_id
      );
      if (call !== undefined) {
        return {
          kind: "call",
          name: String(call.name),
          namespace: typeof call.namespace === "string" ? call.namespace : null,
          arguments: JSON.parse(String(call.arguments)),
        };
      }
    }
    return { kind: "text", text: `FINAL: ${text}` };
  }
  if (options.shell !== undefined) {
    const shell = shellTool(body.tools);
    if (shell === null) return { kind: "text", text: "NO-SHELL" };
    const args = shell === "exec_command"
      ? { cmd: options.shell, yield_time_ms: 30000 }
      : { command: ["sh", "-c", options.shell] };
    return { kind: "call", name: shell, namespace: null, arguments: args };
  }
  const tool = offeredTool(body.tools);
  if (tool === null) return { kind: "text", text: "NO-TOOL" };
  return { kind: "call", ...tool, arguments: { text: `hi from ${options.agent}` } };
}

function usage(): Item {
  return {
    input_tokens: FAKE_USAGE.input,
    input_tokens_details: { cached_tokens: FAKE_USAGE.cached },
    output_tokens: FAKE_USAGE.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: FAKE_USAGE.input + FAKE_USAGE.output,
  };
}

function outputItem(turn: Turn, n: number): Item {
  if (turn.kind === "text") {
    return {
      type: "message",
      id: `msg_${n}`,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    };
  }
  const item: Item = {
    type: "function_call",
    id: `fc_${n}`,
    call_id: `call_${n}`,
    name: turn.name,
    arguments: JSON.stringify(turn.arguments),
    status: "completed",
  };
  if (turn.namespace !== null) item.namespace = turn.namespace;
  return item;
}

function response(model: unknown, n: number, status: string, output: Item[]): Item {
  return {
    id: `resp_${n}`,
    object: "response",
    created_at: 1700000000,
    status,
    model,
    output,
    usage: status === "completed" ? usage() : null,
  };
}

/** The server-sent events of one streamed answer, as the service writes them. */
export function responsesStream(model: unknown, turn: Turn, n: number): string {
  const item = outputItem(turn, n);
  const events: Item[] = [
    { type: "response.created", response: response(model, n, "in_progress", []) },
    {
      type: "response.output_item.added",
      output_index: 0,
      item: turn.kind === "text"
        ? { ...item, status: "in_progress", content: [] }
        : { ...item, status: "in_progress", arguments: "" },
    },
  ];
  const at = { item_id: item.id, output_index: 0 };
  if (turn.kind === "text") {
    const part = (text: string) => ({ type: "output_text", text, annotations: [] });
    events.push(
      { type: "response.content_part.added", ...at, content_index: 0, part: part("") },
      { type: "response.output_text.delta", ...at, content_index: 0, delta: turn.text },
      { type: "response.output_text.done", ...at, content_index: 0, text: turn.text },
      { type: "response.content_part.done", ...at, content_index: 0, part: part(turn.text) },
    );
  } else {
    events.push(
      { type: "response.function_call_arguments.delta", ...at, delta: item.arguments },
      { type: "response.function_call_arguments.done", ...at, arguments: item.arguments },
    );
  }
  events.push(
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response: response(model, n, "completed", [item]) },
  );
  return events.map((event, sequence) =>
    `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence })}\n\n`
  ).join("");
}

/** Starts the fake on a free port of 127.0.0.1. */
/** The stand-in's answer to one request, each request kept in `requests`. */
export function responsesHandler(
  options: FakeResponsesOptions,
  requests: { push(request: FakeRequest): unknown },
): (req: Request) => Promise<Response> {
  let n = 0;
  return async (req) => {
    const url = new URL(req.url);
    const request: FakeRequest = {
      method: req.method,
      path: url.pathname + url.search,
      headers: Object.fromEntries(req.headers),
      body: await req.text(),
    };
    requests.push(request);
    if (req.method === "GET" && url.pathname.endsWith("/models")) {
      return Response.json({ object: "list", data: [], models: [] });
    }
    if (req.method !== "POST" || !url.pathname.endsWith("/responses")) {
      return Response.json({ error: { message: "fake: no such path", type: "not_found" } }, {
        status: 404,
      });
    }
    const body = JSON.parse(request.body) as Item;
    const turn = responsesTurn(body, options);
    n++;
    if (body.stream !== true) {
      return Response.json(response(body.model, n, "completed", [outputItem(turn, n)]));
    }
    return new Response(responsesStream(body.model, turn, n), {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    });
  };
}

export function startFakeResponses(options: FakeResponsesOptions): FakeResponses {
  const requests: FakeRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    responsesHandler(options, requests),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    turns: () =>
      requests
        .filter((request) => request.method === "POST" && /\/responses$/.test(request.path))
        .map((request) => JSON.parse(request.body)),
    close: () => server.shutdown(),
  };
}

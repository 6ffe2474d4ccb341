/**
 * A scripted stand-in for Anthropic's Messages API (the agent tests', and `gurt dev model-stand-in`'s):
 * a real HTTP server on 127.0.0.1
 * that answers `POST /v1/messages` (with or without `?beta=true`) in the service's own format,
 * streamed as server-sent events when the request asks for a stream, else whole, and logs every
 * request (method, path, headers, parsed body).
 *
 * With `calls` set, the tools named there are called first, one an answer, in order: each the
 * first offered tool whose name ends with its name (`everything__echo` is Claude Code's
 * `mcp__box__everything__echo`), with its input; then the script goes on as below.
 *
 * The script, by the conversation's last message:
 * - it holds a tool result: when the result says the call waits for the owner ("Call this tool
 *   again") and the fake has retried fewer than `retries` times, the same tool is called again with
 *   the same input; otherwise the answer is the text `FINAL: <that result's text>`;
 * - otherwise, with `bash` set and a tool named `Bash` offered: Bash is called with that command;
 * - otherwise, with `tool` set and a tool of its name offered: that tool is called with its input
 *   (an agent's own tool, such as Claude Code's WebFetch);
 * - otherwise the first offered tool whose name contains `example__echo` is called with
 *   `{"text": "hi from <agent>"}`; with no such tool the answer is `NO-TOOL`.
 *
 * Each answer reports `usage` (by default 100,000 input tokens, so a few answers cost cents).
 * `GET /v1/models` lists one model whatever the key, so `gurt vault set ANTHROPIC_API_KEY`, whose
 * check calls it at `[vault] anthropic_base_url`, saves a made-up key.
 * `gurt dev model-stand-in` serves it with the Responses and Chat Completions stand-ins on one port.
 * When `gurt loop`'s `call_tool` is offered and no `example__echo` tool, the script calls
 * `example.echo` through it.
 */

/** One request as the fake received it. */
export interface FakeAnthropicRequest {
  method: string;
  /** The path and its query. */
  path: string;
  headers: Record<string, string>;
  /** The body parsed as JSON, else its text. */
  body: FakeBody;
}

/** A parsed request body, read field by field by the tests. */
// deno-lint-ignore no-explicit-any
export type FakeBody = any;

/** What the fake's script does. */
export interface FakeAnthropicOptions {
  /** The name in `hi from <agent>`; by default guessed from the user-agent (claude, droid). */
  agent?: string;
  /** A shell command to run through the agent's Bash tool first, when it offers one. */
  bash?: string;
  /** A tool of the agent's own to call first, when offered, with this input (after `bash`). */
  tool?: { name: string; input: unknown };
  /** Tools to call first, one an answer, in order, each by the end of its name (see above). */
  calls?: ToolUse[];
  /** How many times a tool is called again while its result says it waits for the owner (1). */
  retries?: number;
  /** The usage each answer reports. */
  usage?: { input_tokens: number; output_tokens: number };
  /** The port, 0 (the default) for one the kernel chooses. */
  port?: number;
  /** A file each request is appended to, as a JSON line. */
  log?: string;
  /** A path the fake serves the API under (a gateway's `/gateway`), before `/v1/messages`. */
  basePath?: string;
}

/** A running fake. */
export interface FakeAnthropic {
  /** Its origin, as ANTHROPIC_BASE_URL or [models] anthropic_base_url names it (no /v1). */
  url: string;
  requests: FakeAnthropicRequest[];
  /** The requests to the Messages API itself (not count_tokens). */
  messages(): FakeAnthropicRequest[];
  close(): Promise<void>;
}

/** A tool the model calls, and its input. */
export interface ToolUse {
  name: string;
  input: unknown;
}

type Turn = { kind: "text"; text: string } | { kind: "tool"; use: ToolUse };

const PENDING = /call this tool again/i;
const DEFAULT_USAGE = { input_tokens: 100_000, output_tokens: 50 };
const MODEL = "claude-sonnet-4-5-20250929";
/** Anthropic's List Models answer, for every key: `gurt vault set ANTHROPIC_API_KEY` tries it. */
const MODELS = {
  data: [{
    type: "model",
    id: MODEL,
    display_name: "Claude Sonnet 4.5",
    created_at: "2025-09-29T00:00:00Z",
  }],
  has_more: false,
  first_id: MODEL,
  last_id: MODEL,
};

/** The stand-in's answer to one request, each request kept in `requests`. */
export function anthropicHandler(
  options: FakeAnthropicOptions,
  requests: { push(request: FakeAnthropicRequest): unknown },
): (req: Request) => Promise<Response> {
  return async (req) => {
    const url = new URL(req.url);
    const base = options.basePath ?? "";
    // Under a base path, a request outside it is one the fake does not have.
    if (base !== "") {
      url.pathname = url.pathname.startsWith(`${base}/`)
        ? url.pathname.slice(base.length)
        : `/outside${url.pathname}`;
    }
    const text = await req.text();
    const request: FakeAnthropicRequest = {
      method: req.method,
      path: new URL(req.url).pathname + url.search,
      headers: Object.fromEntries(req.headers),
      body: parse(text),
    };
    requests.push(request);
    if (options.log !== undefined) {
      await Deno.writeTextFile(options.log, JSON.stringify(request) + "\n", { append: true });
    }
    if (req.method === "POST" && url.pathname === "/v1/messages/count_tokens") {
      return Response.json({ input_tokens: 10 });
    }
    if (req.method === "GET" && url.pathname === "/v1/models") return Response.json(MODELS);
    if (req.method !== "POST" || url.pathname !== "/v1/messages") {
      return Response.json({
        type: "error",
        error: {
          type: "not_found_error",
          message: `the fake has no ${req.method} ${url.pathname}`,
        },
      }, { status: 404 });
    }
    const body = request.body ?? {};
    const turn = nextTurn(body, { ...options, agent: options.agent ?? agentOf(request.headers) });
    const model = typeof body.model === "string" ? body.model : "claude-sonnet-4-5";
    const usage = options.usage ?? DEFAULT_USAGE;
    if (body.stream === true) {
      return new Response(events(model, turn, usage).join(""), {
        headers: { "content-type": "text/event-stream; charset=utf-8" },
      });
    }
    return Response.json(whole(model, turn, usage));
  };
}

/** Starts the fake on 127.0.0.1. */
export function startFakeAnthropic(options: FakeAnthropicOptions = {}): FakeAnthropic {
  const requests: FakeAnthropicRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: options.port ?? 0, onListen: () => {} },
    anthropicHandler(options, requests),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    messages: () =>
      requests.filter((r) => r.path.split("?")[0] === `${options.basePath ?? ""}/v1/messages`),
    close: () => server.shutdown(),
  };
}

function parse(text: string): FakeBody {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The agent's name from its user-agent: claude-cli is claude, factory-cli is droid. */
function agentOf(headers: Record<string, string>): string {
  const agent = headers["user-agent"] ?? "";
  if (agent.includes("claude-cli")) return "claude";
  if (agent.includes("factory-cli")) return "droid";
  return "agent";
}

/** What the script answers to a Messages request's body. */
export function nextTurn(
  body: FakeBody,
  options: {
    agent: string;
    bash?: string;
    tool?: { name: string; input: unknown };
    calls?: ToolUse[];
    retries?: number;
  },
): Turn {
  const messages: FakeBody[] = Array.isArray(body.messages) ? body.messages : [];
  const tools: { name: string }[] = Array.isArray(body.tools) ? body.tools : [];
  const next = options.calls?.[toolUses(messages).length];
  if (next !== undefined) {
    const offered = tools.find((tool) => tool.name.endsWith(next.name));
    if (offered === undefined) return { kind: "text", text: `NO-TOOL ${next.name}` };
    return { kind: "tool", use: { name: offered.name, input: next.input } };
  }
  const last = [...messages].reverse().find((m) => m.role === "user" || m.role === "assistant");
  const result = last?.role === "user" ? lastToolResult(last.content) : null;
  if (result !== null) {
    const uses = toolUses(messages);
    const lastUse = uses.at(-1);
    const retried = uses.filter((use) => sameUse(use, lastUse)).length - 1;
    if (PENDING.test(result) && lastUse !== undefined && retried < (options.retries ?? 1)) {
      return { kind: "tool", use: lastUse };
    }
    return { kind: "text", text: `FINAL: ${result}` };
  }
  if (options.bash !== undefined && tools.some((tool) => tool.name === "Bash")) {
    return {
      kind: "tool",
      use: {
        name: "Bash",
        input: { command: options.bash, description: "Runs the test's command" },
      },
    };
  }
  const own = options.tool;
  if (own !== undefined && tools.some((tool) => tool.name === own.name)) {
    return { kind: "tool", use: { name: own.name, input: own.input } };
  }
  const echo = tools.find((tool) => tool.name.includes("example__echo"));
  if (echo === undefined && tools.some((tool) => tool.name === "call_tool")) {
    const call = { name: "example.echo", input: { text: `hi from ${options.agent}` } };
    return { kind: "tool", use: { name: "call_tool", input: call } };
  }
  if (echo === undefined) return { kind: "text", text: "NO-TOOL" };
  return { kind: "tool", use: { name: echo.name, input: { text: `hi from ${options.agent}` } } };
}

function sameUse(a: ToolUse, b: ToolUse | undefined): boolean {
  return b !== undefined && a.name === b.name &&
    JSON.stringify(a.input) === JSON.stringify(b.input);
}

/** The text of the last tool_result block of a user message's content, else null. */
function lastToolResult(content: unknown): string | null {
  if (!Array.isArray(content)) return null;
  const results = content.filter((block) => block?.type === "tool_result");
  if (results.length === 0) return null;
  const inner = results[results.length - 1].content;
  const text = typeof inner === "string"
    ? inner
    : Array.isArray(inner)
    ? inner.filter((b) => b?.type === "text").map((b) => String(b.text)).join("\n")
    : "";
  // Claude Code appends its own reminders to a tool's result.
  return text.replace(/\s*<system-reminder>[\s\S]*?<\/system-reminder>/g, "").trim();
}

/** Every tool_use block of the assistant's messages, in order. */
function toolUses(messages: FakeBody[]): ToolUse[] {
  const uses: ToolUse[] = [];
  for (const message of messages) {
    if (message.role !== "assistant" || !Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block?.type === "tool_use") uses.push({ name: block.name, input: block.input });
    }
  }
  return uses;
}

let counter = 0;

function block(turn: Turn): Record<string, unknown> {
  if (turn.kind === "text") return { type: "text", text: turn.text };
  counter += 1;
  return {
    type: "tool_use",
    id: `toolu_fake${counter}`,
    name: turn.use.name,
    input: turn.use.input,
  };
}

function whole(
  model: string,
  turn: Turn,
  usage: { input_tokens: number; output_tokens: number },
): unknown {
  return {
    id: `msg_fake${++counter}`,
    type: "message",
    role: "assistant",
    model,
    content: [block(turn)],
    stop_reason: turn.kind === "tool" ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage,
  };
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A streamed answer of one block, as the service writes it. */
function events(
  model: string,
  turn: Turn,
  usage: { input_tokens: number; output_tokens: number },
): string[] {
  const content = block(turn);
  const start = turn.kind === "text" ? { type: "text", text: "" } : { ...content, input: {} };
  const delta = turn.kind === "text"
    ? { type: "text_delta", text: turn.text }
    : { type: "input_json_delta", partial_json: JSON.stringify(turn.use.input) };
  return [
    sse("message_start", {
      type: "message_start",
      message: {
        id: `msg_fake${++counter}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
      },
    }),
    sse("content_block_start", { type: "content_block_start", index: 0, content_block: start }),
    sse("ping", { type: "ping" }),
    sse("content_block_delta", { type: "content_block_delta", index: 0, delta }),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: turn.kind === "tool" ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
    sse("message_stop", { type: "message_stop" }),
  ];
}

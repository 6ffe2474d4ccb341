/**
 * A scripted fake of OpenAI's Chat Completions service for the agent tests (OpenCode through
 * `@ai-sdk/openai-compatible`): a real HTTP server on 127.0.0.1 that records every request (method,
 * path, headers, body) and answers `POST …/chat/completions` in the service's own wire format,
 * streamed as server-sent events when asked (chunks, then the usage chunk when
 * `stream_options.include_usage` asks for it, then `data: [DONE]`) or whole.
 *
 * The script (`chatTurn`, pure): a request that offers no tools and whose system text asks for a
 * title (OpenCode's title request, sent before the turn) is answered by a short title. Otherwise,
 * when the last message is a tool's result, answer the text `FINAL: <that result's text>`, except
 * that a result asking to call the tool again (gurt's pending text) is answered by the same call
 * again, `retries` times; otherwise call the first offered tool whose name contains `example__echo`
 * with `{"text": "hi from <agent>"}` (or `text`); with no such tool, answer `NO-TOOL`. With `shell`,
 * the first turn asks the agent's shell tool (`bash`) to run that command instead.
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
export interface FakeChatOptions {
  /** Named in the echo call's text: `hi from <agent>`. */
  agent: string;
  /** The echo call's text instead of `hi from <agent>`. */
  text?: string;
  /** How many times a pending result is answered by calling the tool again (default 1). */
  retries?: number;
  /** A command the first turn asks the agent's shell tool to run (instead of the echo call). */
  shell?: string;
}

/** The usage every answer reports. */
export const FAKE_CHAT_USAGE = { input: 1000, cached: 200, output: 50 };

/** The words of gurt's pending answer that ask the agent to call again. */
export const PENDING_WORDS = "Call this tool again";

/** The title the fake gives a title request. */
export const FAKE_TITLE = "Echo through the box";

/** What the fake answers to one request body. */
export type ChatTurn =
  | { kind: "call"; name: string; arguments: Record<string, unknown> }
  | { kind: "text"; text: string };

/** A running fake. */
export interface FakeChat {
  /** Its origin, e.g. http://127.0.0.1:4321 (an OpenAI base URL is this + "/v1"). */
  url: string;
  requests: FakeRequest[];
  /** The parsed bodies of the requests that went to a chat/completions path. */
  turns(): Record<string, unknown>[];
  close(): Promise<void>;
}

type Item = Record<string, unknown>;

/** The text of a message's content: a string, or the text of its text parts. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) {
    return content === null || content === undefined ? "" : String(content);
  }
  return content
    .filter((part): part is { text: string } => typeof part?.text === "string")
    .map((part) => part.text)
    .join("\n");
}

function toolNames(tools: unknown): string[] {
  if (!Array.isArray(tools)) return [];
  return (tools as Item[])
    .map((tool) => (tool.function as Item | undefined)?.name ?? tool.name)
    .filter((name): name is string => typeof name === "string");
}

/** Whether a request is OpenCode's title request: no tools, a system text that asks for a title. */
export function isTitleRequest(body: Item): boolean {
  if (toolNames(body.tools).length > 0) return false;
  const messages: Item[] = Array.isArray(body.messages) ? body.messages as Item[] : [];
  return messages.some((message) =>
    message.role === "system" && /title/i.test(contentText(message.content))
  );
}

/** The call an assistant message made with this id, if any. */
function callOf(messages: Item[], id: unknown): { name: string; arguments: string } | null {
  for (const message of messages) {
    if (message.role !== "assistant" || !Array.isArray(message.tool_calls)) continue;
    for (const call of message.tool_calls as Item[]) {
      const fn = call.function as Item | undefined;
      if (call.id === id && typeof fn?.name === "string") {
        return { name: fn.name, arguments: String(fn.arguments ?? "{}") };
      }
    }
  }
  return null;
}

/** The script: what the fake answers to a Chat Completions request body. */
export function chatTurn(body: Item, options: FakeChatOptions): ChatTurn {
  if (isTitleRequest(body)) return { kind: "text", text: FAKE_TITLE };
  const messages: Item[] = Array.isArray(body.messages) ? body.messages as Item[] : [];
  const last = messages.at(-1);
  if (last?.role === "tool") {
    const text = contentText(last.content);
    const pending = messages.filter((message) =>
      message.role === "tool" && contentText(message.content).includes(PENDING_WORDS)
    ).length;
    if (text.includes(PENDING_WORDS) && pending <= (options.retries ?? 1)) {
      const call = callOf(messages, last.tool_call_id);
      if (call !== null) {
        return { kind: "call", name: call.name, arguments: JSON.parse(call.arguments) };
      }
    }
    return { kind: "text", text: `FINAL: ${text}` };
  }
  const names = toolNames(body.tools);
  if (options.shell !== undefined) {
    if (!names.includes("bash")) return { kind: "text", text: "NO-SHELL" };
    return {
      kind: "call",
      name: "bash",
      arguments: { command: options.shell, description: "Runs the test's command" },
    };
  }
  const tool = names.find((name) => name.includes("example__echo"));
  if (tool === undefined && names.includes("call_tool")) {
    // gurt loop's own tool: example.echo through it.
    const input = { text: options.text ?? `hi from ${options.agent}` };
    return { kind: "call", name: "call_tool", arguments: { name: "example.echo", input } };
  }
  if (tool === undefined) return { kind: "text", text: "NO-TOOL" };
  return {
    kind: "call",
    name: tool,
    arguments: { text: options.text ?? `hi from ${options.agent}` },
  };
}

function usage(): Item {
  return {
    prompt_tokens: FAKE_CHAT_USAGE.input,
    prompt_tokens_details: { cached_tokens: FAKE_CHAT_USAGE.cached },
    completion_tokens: FAKE_CHAT_USAGE.output,
    total_tokens: FAKE_CHAT_USAGE.input + FAKE_CHAT_USAGE.output,
  };
}

function chunk(model: unknown, n: number, choices: Item[], withUsage = false): string {
  const data = {
    id: `chatcmpl-${n}`,
    object: "chat.completion.chunk",
    created: 1700000000,
    model,
    choices,
    usage: withUsage ? usage() : null,
  };
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** The server-sent events of one streamed answer, as the service writes them. */
export function chatStream(model: unknown, turn: ChatTurn, n: number, withUsage: boolean): string {
  const choice = (delta: Item, finish: string | null = null) => ({
    index: 0,
    delta,
    finish_reason: finish,
  });
  const writes = [chunk(model, n, [choice({ role: "assistant", content: "" })])];
  if (turn.kind === "text") {
    writes.push(chunk(model, n, [choice({ content: turn.text })]));
    writes.push(chunk(model, n, [choice({}, "stop")]));
  } else {
    const args = JSON.stringify(turn.arguments);
    const call = (fn: Item, first: boolean) => ({
      tool_calls: [{
        index: 0,
        ...(first ? { id: `call_${n}`, type: "function" } : {}),
        function: fn,
      }],
    });
    writes.push(chunk(model, n, [choice(call({ name: turn.name, arguments: "" }, true))]));
    // The arguments come in two pieces, as the service splits them.
    const half = Math.floor(args.length / 2);
    writes.push(chunk(model, n, [choice(call({ arguments: args.slice(0, half) }, false))]));
    writes.push(chunk(model, n, [choice(call({ arguments: args.slice(half) }, false))]));
    writes.push(chunk(model, n, [choice({}, "tool_calls")]));
  }
  if (withUsage) writes.push(chunk(model, n, [], true));
  writes.push("data: [DONE]\n\n");
  return writes.join("");
}

/** One whole (not streamed) answer. */
export function chatCompletion(model: unknown, turn: ChatTurn, n: number): Item {
  const message: Item = turn.kind === "text" ? { role: "assistant", content: turn.text } : {
    role: "assistant",
    content: null,
    tool_calls: [{
      id: `call_${n}`,
      type: "function",
      function: { name: turn.name, arguments: JSON.stringify(turn.arguments) },
    }],
  };
  return {
    id: `chatcmpl-${n}`,
    object: "chat.completion",
    created: 1700000000,
    model,
    choices: [{
      index: 0,
      message,
      finish_reason: turn.kind === "text" ? "stop" : "tool_calls",
    }],
    usage: usage(),
  };
}

/** Starts the fake on a free port of 127.0.0.1. */
/** The stand-in's answer to one request, each request kept in `requests`. */
export function chatHandler(
  options: FakeChatOptions,
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
      return Response.json({ object: "list", data: [] });
    }
    if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions")) {
      return Response.json({ error: { message: "fake: no such path", type: "not_found" } }, {
        status: 404,
      });
    }
    const body = JSON.parse(request.body) as Item;
    const turn = chatTurn(body, options);
    n++;
    if (body.stream !== true) return Response.json(chatCompletion(body.model, turn, n));
    const withUsage = (body.stream_options as Item | undefined)?.include_usage === true;
    return new Response(chatStream(body.model, turn, n, withUsage), {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    });
  };
}

export function startFakeChat(options: FakeChatOptions): FakeChat {
  const requests: FakeRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    chatHandler(options, requests),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    turns: () =>
      requests
        .filter((request) => request.method === "POST" && /\/chat\/completions$/.test(request.path))
        .map((request) => JSON.parse(request.body)),
    close: () => server.shutdown(),
  };
}

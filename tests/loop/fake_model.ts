/**
 * A scripted model service over real HTTP on 127.0.0.1, speaking Anthropic's Messages API
 * (/v1/messages) and OpenAI-compatible chat completions (/v1/chat/completions), streamed when the
 * request asks for it. Each request takes the next scripted reply; a reply may be held until the
 * test releases it. Like OpenAI, it refuses max_tokens for a gpt-5 or o-series model (400).
 */

/** One scripted answer: text, tool calls, or both. */
export interface ScriptedReply {
  text?: string;
  calls?: { name: string; input: unknown }[];
  /** When set, the answer waits for this promise (the test holds the turn). */
  hold?: Promise<void>;
  /** The tokens the answer reports; 1000 input and 100 output unless set. */
  usage?: { input: number; output: number };
}

/** What the service received. */
export interface SeenRequest {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  raw: string;
}

/** A running fake service. */
export interface FakeModel {
  url: string;
  requests: SeenRequest[];
  /** Resolves when the service has received `n` requests. */
  received(n: number): Promise<void>;
  close(): Promise<void>;
}

const USAGE = { input: 1000, output: 100 };

/** The tokens `reply` reports. */
function usageOf(reply: ScriptedReply): { input: number; output: number } {
  return reply.usage ?? USAGE;
}

/** Starts the service with its script. */
export function startFakeModel(script: ScriptedReply[]): FakeModel {
  const requests: SeenRequest[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  let next = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const raw = await req.text();
    const path = new URL(req.url).pathname;
    const headers: Record<string, string> = {};
    req.headers.forEach((value, name) => (headers[name] = value));
    requests.push({ path, headers, body: JSON.parse(raw), raw });
    for (const waiter of waiters.filter((w) => requests.length >= w.n)) waiter.resolve();
    const reply = script[next++] ?? { text: "(the script has ended)" };
    if (reply.hold !== undefined) await reply.hold;
    const stream = JSON.parse(raw).stream === true;
    // Under a provider's base path too (/api/v1/chat/completions, /gateway/v1/messages).
    if (path.endsWith("/v1/messages")) return anthropic(reply, stream, requests.length);
    if (path.endsWith("/chat/completions")) {
      const refusal = refusedByOpenAI(JSON.parse(raw));
      if (refusal !== null) return refusal;
      return openai(reply, stream, requests.length);
    }
    return new Response("not found", { status: 404 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    received(n) {
      if (requests.length >= n) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    close: () => server.shutdown(),
  };
}

function sse(events: { event?: string; data: unknown }[]): Response {
  const text = events.map((e) =>
    `${e.event === undefined ? "" : `event: ${e.event}\n`}data: ${
      typeof e.data === "string" ? e.data : JSON.stringify(e.data)
    }\n\n`
  ).join("");
  const bytes = new TextEncoder().encode(text);
  // Sent in small pieces, so the readers must put split lines back together.
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.slice(i, i + 7));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

function anthropic(reply: ScriptedReply, stream: boolean, n: number): Response {
  const calls = (reply.calls ?? []).map((c, i) => ({ id: `toolu_${n}_${i}`, ...c }));
  if (!stream) {
    const content = [
      ...(reply.text === undefined ? [] : [{ type: "text", text: reply.text }]),
      ...calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: c.input })),
    ];
    return Response.json({
      id: `msg_${n}`,
      type: "message",
      role: "assistant",
      content,
      stop_reason: calls.length > 0 ? "tool_use" : "end_turn",
      usage: { input_tokens: usageOf(reply).input, output_tokens: usageOf(reply).output },
    });
  }
  const events: { event: string; data: unknown }[] = [{
    event: "message_start",
    data: {
      type: "message_start",
      message: {
        id: `msg_${n}`,
        role: "assistant",
        content: [],
        usage: { input_tokens: usageOf(reply).input },
      },
    },
  }];
  let index = 0;
  if (reply.text !== undefined) {
    events.push({
      event: "content_block_start",
      data: { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    });
    const half = Math.floor(reply.text.length / 2);
    for (const piece of [reply.text.slice(0, half), reply.text.slice(half)]) {
      events.push({
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta: { type: "text_delta", text: piece } },
      });
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    index++;
  }
  for (const call of calls) {
    events.push({
      event: "content_block_start",
      data: {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: call.id, name: call.name, input: {} },
      },
    });
    const json = JSON.stringify(call.input);
    const half = Math.floor(json.length / 2);
    for (const piece of [json.slice(0, half), json.slice(half)]) {
      events.push({
        event: "content_block_delta",
        data: {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: piece },
        },
      });
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
    index++;
  }
  events.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: calls.length > 0 ? "tool_use" : "end_turn" },
      usage: { output_tokens: usageOf(reply).output },
    },
  });
  events.push({ event: "message_stop", data: { type: "message_stop" } });
  return sse(events);
}

/**
 * OpenAI's answer to a Chat Completions request for a gpt-5 or o-series model that names
 * max_tokens, which those models do not take (they take max_completion_tokens); null for any other.
 */
function refusedByOpenAI(body: Record<string, unknown>): Response | null {
  const model = String(body.model ?? "");
  if (body.max_tokens === undefined || !/^(gpt-5|o\d)/.test(model)) return null;
  return Response.json({
    error: {
      message:
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      type: "invalid_request_error",
      param: "max_tokens",
      code: "unsupported_parameter",
    },
  }, { status: 400 });
}

function openai(reply: ScriptedReply, stream: boolean, n: number): Response {
  const calls = (reply.calls ?? []).map((c, i) => ({ id: `call_${n}_${i}`, ...c }));
  const usage = { prompt_tokens: usageOf(reply).input, completion_tokens: usageOf(reply).output };
  if (!stream) {
    return Response.json({
      id: `chatcmpl-${n}`,
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: reply.text ?? null,
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: JSON.stringify(c.input) },
          })),
        },
        finish_reason: calls.length > 0 ? "tool_calls" : "stop",
      }],
      usage,
    });
  }
  const chunk = (delta: unknown, finish: string | null = null) => ({
    data: { id: `chatcmpl-${n}`, choices: [{ index: 0, delta, finish_reason: finish }] },
  });
  const events: { data: unknown }[] = [chunk({ role: "assistant", content: "" })];
  if (reply.text !== undefined) {
    const half = Math.floor(reply.text.length / 2);
    events.push(chunk({ content: reply.text.slice(0, half) }));
    events.push(chunk({ content: reply.text.slice(half) }));
  }
  calls.forEach((call, index) => {
    const json = JSON.stringify(call.input);
    const half = Math.floor(json.length / 2);
    events.push(chunk({
      tool_calls: [{
        index,
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: json.slice(0, half) },
      }],
    }));
    events.push(chunk({ tool_calls: [{ index, function: { arguments: json.slice(half) } }] }));
  });
  events.push(chunk({}, calls.length > 0 ? "tool_calls" : "stop"));
  events.push({ data: { id: `chatcmpl-${n}`, choices: [], usage } });
  events.push({ data: "[DONE]" });
  return sse(events);
}

/**
 * Scripted fake Anthropic and OpenAI services for the model endpoint's tests: real HTTP servers on
 * 127.0.0.1 that record every request (method, path with its query, headers, body) and answer in
 * the services' own formats, streamed (server-sent events, as the services write them) or whole.
 * A test may queue its own answer, whose writes are sent as written, each after the gate before it
 * opens, so a test can hold the rest of a stream while it looks at what has arrived.
 */

/** One request as the fake received it. */
export interface FakeRequest {
  method: string;
  /** The path and its query, as asked for. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** One answer: its writes in order; write i + 1 waits for `gates[i]` when there is one. */
export interface ScriptedAnswer {
  status?: number;
  type?: string;
  headers?: Record<string, string>;
  writes: string[];
  gates?: Promise<void>[];
}

/** A running fake service. */
export interface FakeService {
  url: string;
  requests: FakeRequest[];
  /** Queues the answer to the next request (else the service's usual answer to it). */
  answer(answer: ScriptedAnswer): void;
  close(): Promise<void>;
}

/** A body of an answer's writes, in order, each sent once the gate before it (if any) opens. */
export function gatedBody(
  answer: { writes: string[]; gates?: Promise<void>[] },
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      for (let i = 0; i < answer.writes.length; i++) {
        if (i > 0 && answer.gates?.[i - 1] !== undefined) await answer.gates[i - 1];
        controller.enqueue(encoder.encode(answer.writes[i]));
      }
      controller.close();
    },
  });
}

/** Starts a fake whose usual answer to a request is `usual`'s. */
export function startFakeService(usual: (request: FakeRequest) => ScriptedAnswer): FakeService {
  const queued: ScriptedAnswer[] = [];
  const requests: FakeRequest[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const request: FakeRequest = {
      method: req.method,
      path: url.pathname + url.search,
      headers: Object.fromEntries(req.headers),
      body: await req.text(),
    };
    requests.push(request);
    const answer = queued.shift() ?? usual(request);
    return new Response(gatedBody(answer), {
      status: answer.status ?? 200,
      headers: { "content-type": answer.type ?? "application/json", ...answer.headers },
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    answer: (answer) => void queued.push(answer),
    close: () => server.shutdown(),
  };
}

/** One server-sent event as the services write it: its name (when it has one), one data line. */
export function sse(event: string | undefined, data: unknown): string {
  const line = typeof data === "string" ? data : JSON.stringify(data);
  return `${event === undefined ? "" : `event: ${event}\n`}data: ${line}\n\n`;
}

/** An SSE answer of these events. */
export function streamed(writes: string[], gates?: Promise<void>[]): ScriptedAnswer {
  return { type: "text/event-stream; charset=utf-8", writes, gates };
}

/** A whole JSON answer. */
export function whole(body: unknown, status = 200): ScriptedAnswer {
  return { status, writes: [JSON.stringify(body)] };
}

/** The usage the fake Anthropic service reports: in message_start, and output in message_delta. */
export const ANTHROPIC_USAGE = {
  input_tokens: 1200,
  cache_creation_input_tokens: 300,
  cache_read_input_tokens: 5000,
  output_tokens: 1,
};
export const ANTHROPIC_OUTPUT = 77;

/** A streamed Messages answer: message_start, a ping, a text block in these deltas, the end. */
export function anthropicEvents(model: string, deltas: string[]): string[] {
  return [
    sse("message_start", {
      type: "message_start",
      message: {
        id: "msg_01",
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: ANTHROPIC_USAGE,
      },
    }),
    sse("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
    sse("ping", { type: "ping" }),
    ...deltas.map((text) =>
      sse("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text },
      })
    ),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: ANTHROPIC_OUTPUT },
    }),
    sse("message_stop", { type: "message_stop" }),
  ];
}

/** A whole Messages answer. */
export function anthropicMessage(model: string, text: string): unknown {
  return {
    id: "msg_01",
    type: "message",
    role: "assistant",
    model,
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { ...ANTHROPIC_USAGE, output_tokens: ANTHROPIC_OUTPUT },
  };
}

/** The usual answers of the fake Anthropic service, by path, and streamed when asked. */
export function anthropicUsual(request: FakeRequest): ScriptedAnswer {
  const path = request.path.replace(/\?.*$/, "");
  if (path === "/v1/models") {
    return whole({
      data: [{ type: "model", id: "claude-sonnet-4-5", display_name: "Claude Sonnet 4.5" }],
      has_more: false,
      first_id: "claude-sonnet-4-5",
      last_id: "claude-sonnet-4-5",
    });
  }
  const body = JSON.parse(request.body);
  if (path === "/v1/messages/count_tokens") return whole({ input_tokens: 1234 });
  if (body.stream === true) return streamed(anthropicEvents(body.model, ["Hello", " there"]));
  return whole(anthropicMessage(body.model, "Hello there"));
}

/** The usage the fake OpenAI service reports (Responses' names; Chat's are spelled apart). */
export const OPENAI_USAGE = { input: 900, cached: 100, output: 250 };

function responsesUsage(): unknown {
  return {
    input_tokens: OPENAI_USAGE.input,
    input_tokens_details: { cached_tokens: OPENAI_USAGE.cached },
    output_tokens: OPENAI_USAGE.output,
    output_tokens_details: { reasoning_tokens: 64 },
    total_tokens: OPENAI_USAGE.input + OPENAI_USAGE.output,
  };
}

function chatUsage(): unknown {
  return {
    prompt_tokens: OPENAI_USAGE.input,
    prompt_tokens_details: { cached_tokens: OPENAI_USAGE.cached },
    completion_tokens: OPENAI_USAGE.output,
    total_tokens: OPENAI_USAGE.input + OPENAI_USAGE.output,
  };
}

function response(model: string, status: string, usage: unknown, text: string): unknown {
  return {
    id: "resp_1",
    object: "response",
    created_at: 1700000000,
    status,
    model,
    output: text === "" ? [] : [{
      type: "message",
      id: "msg_1",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [] }],
    }],
    usage,
  };
}

/**
 * A streamed Responses answer as the service writes it: created, one message item whose one
 * output_text part comes in these deltas, the item's end, completed with its usage.
 */
export function responsesEvents(model: string, deltas: string[]): string[] {
  const text = deltas.join("");
  const part = (text: string) => ({ type: "output_text", text, annotations: [] });
  const item = (content: unknown[]) => ({
    type: "message",
    id: "msg_1",
    status: "completed",
    role: "assistant",
    content,
  });
  const at = { item_id: "msg_1", output_index: 0, content_index: 0 };
  return responsesStream(model, text, [
    ["response.output_item.added", { output_index: 0, item: item([]) }],
    ["response.content_part.added", { ...at, part: part("") }],
    ...deltas.map((delta): Written => ["response.output_text.delta", { ...at, delta }]),
    ["response.output_text.done", { ...at, text }],
    ["response.content_part.done", { ...at, part: part(text) }],
    ["response.output_item.done", { output_index: 0, item: item([part(text)]) }],
  ]);
}

/** A streamed Responses answer with one function call whose arguments come in these deltas. */
export function responsesToolEvents(model: string, deltas: string[]): string[] {
  const call = (args: string) => ({
    type: "function_call",
    id: "fc_1",
    call_id: "call_1",
    name: "shell",
    arguments: args,
    status: "completed",
  });
  const at = { item_id: "fc_1", output_index: 0 };
  const args = deltas.join("");
  return responsesStream(model, "", [
    ["response.output_item.added", { output_index: 0, item: call("") }],
    ...deltas.map((delta): Written => ["response.function_call_arguments.delta", { ...at, delta }]),
    ["response.function_call_arguments.done", { ...at, arguments: args }],
    ["response.output_item.done", { output_index: 0, item: call(args) }],
  ]);
}

type Written = [string, Record<string, unknown>];

/** Responses events: created, these, completed (whose output is a message of `text`, if any). */
function responsesStream(model: string, text: string, events: Written[]): string[] {
  let sequence = 0;
  const event = ([type, fields]: Written) =>
    sse(type, { type, sequence_number: sequence++, ...fields });
  return [
    event(["response.created", { response: response(model, "in_progress", null, "") }]),
    ...events.map(event),
    event(["response.completed", {
      response: response(model, "completed", responsesUsage(), text),
    }]),
  ];
}

/** A streamed Messages answer with one tool_use block whose input comes in these deltas. */
export function anthropicToolEvents(model: string, partials: string[]): string[] {
  const events = anthropicEvents(model, []);
  return [
    events[0],
    sse("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: "toolu_1", name: "shell", input: {} },
    }),
    ...partials.map((partial_json) =>
      sse("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json },
      })
    ),
    ...events.slice(3),
  ];
}

/** One Chat Completions chunk. */
function chatChunk(model: string, choices: unknown[], usage: unknown = null): string {
  return sse(undefined, {
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 1700000000,
    model,
    choices,
    usage,
  });
}

/** A streamed Chat Completions answer: the text in these deltas, the usage chunk, [DONE]. */
export function chatChunks(model: string, deltas: string[]): string[] {
  const chunk = (choices: unknown[], usage: unknown = null) => chatChunk(model, choices, usage);
  return [
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]),
    ...deltas.map((content) => chunk([{ index: 0, delta: { content }, finish_reason: null }])),
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
    chunk([], chatUsage()),
    "data: [DONE]\n\n",
  ];
}

/** A streamed Chat Completions answer with one tool call whose arguments come in these deltas. */
export function chatToolChunks(model: string, deltas: string[]): string[] {
  const chunks = chatChunks(model, []);
  const call = (fn: Record<string, unknown>, first: boolean) =>
    chatChunk(model, [{
      index: 0,
      delta: {
        tool_calls: [{
          index: 0,
          ...(first ? { id: "call_1", type: "function" } : {}),
          function: fn,
        }],
      },
      finish_reason: null,
    }]);
  return [
    chunks[0],
    call({ name: "shell", arguments: "" }, true),
    ...deltas.map((args) => call({ arguments: args }, false)),
    ...chunks.slice(1),
  ];
}

/** The usual answers of the fake OpenAI service, by path, and streamed when asked. */
export function openaiUsual(request: FakeRequest): ScriptedAnswer {
  const path = request.path.replace(/\?.*$/, "");
  if (path === "/v1/models") {
    return whole({
      object: "list",
      data: [{ id: "gpt-5", object: "model", created: 1700000000, owned_by: "openai" }],
    });
  }
  const body = JSON.parse(request.body);
  if (path === "/v1/responses") {
    if (body.stream === true) return streamed(responsesEvents(body.model, ["Hello", " there"]));
    return whole(response(body.model, "completed", responsesUsage(), "Hello there"));
  }
  if (body.stream === true) {
    const chunks = chatChunks(body.model, ["Hello", " there"]);
    // The usage chunk comes only when the request asks for it, as the service sends it.
    const asked = body.stream_options?.include_usage === true;
    return streamed(asked ? chunks : chunks.filter((_, i) => i !== chunks.length - 2));
  }
  return whole({
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1700000000,
    model: body.model,
    choices: [{
      index: 0,
      message: { role: "assistant", content: "Hello there" },
      finish_reason: "stop",
    }],
    usage: chatUsage(),
  });
}

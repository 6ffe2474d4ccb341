/**
 * A model service for the endpoint's redaction tests: a real HTTP server on 127.0.0.1 that answers
 * each request with the next answer the test gave it, written as the test wrote it (server-sent
 * events byte for byte, or a whole body), each write sent once the test lets it go. Also the
 * worker's side: the answer's events read back strictly, and the text a worker puts together.
 */
import { assert } from "../assert.ts";
import { startBox, type TestBox, type TestTask } from "../kit/mod.ts";
import { gatedBody, sse } from "./fake_services.ts";

/** One answer: its writes in order; write i + 1 waits for `gates[i]` when there is one. */
export interface ServedAnswer {
  status?: number;
  type?: string;
  writes: string[];
  gates?: Promise<void>[];
}

/** A running service. */
export interface SseService {
  url: string;
  /** The body of every request it received, parsed. */
  requests: Record<string, unknown>[];
  /** Queues the answer to the next request. */
  answer(answer: ServedAnswer): void;
  close(): Promise<void>;
}

/** Starts the service. A request with no answer queued gets a 500. */
export function startSseService(): SseService {
  const queued: ServedAnswer[] = [];
  const requests: Record<string, unknown>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    requests.push(await req.json());
    const answer = queued.shift();
    if (answer === undefined) return new Response("no answer queued", { status: 500 });
    return new Response(gatedBody(answer), {
      status: answer.status ?? 200,
      headers: { "content-type": answer.type ?? "text/event-stream" },
    });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    answer: (answer) => void queued.push(answer),
    close: () => server.shutdown(),
  };
}

/** One event as written on the wire: `event:` (when named) and one `data:` line. */
export { sse };

/** The Anthropic Messages events around a message's blocks. */
export function anthropicMessage(blocks: string[][]): string[] {
  return [
    sse("message_start", {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        content: [],
        model: "claude-sonnet-5-5",
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    }),
    ...blocks.flat(),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn" },
      usage: { output_tokens: 5 },
    }),
    sse("message_stop", { type: "message_stop" }),
  ];
}

/** A text block at `index` whose text comes in these deltas. */
export function textBlock(index: number, deltas: string[]): string[] {
  return [
    sse("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "text", text: "" },
    }),
    ...deltas.map((text) =>
      sse("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "text_delta", text },
      })
    ),
    sse("content_block_stop", { type: "content_block_stop", index }),
  ];
}

/** A thinking block at `index` whose thinking comes in these deltas, then its signature. */
export function thinkingBlock(index: number, deltas: string[]): string[] {
  return [
    sse("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "thinking", thinking: "", signature: "" },
    }),
    ...deltas.map((thinking) =>
      sse("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "thinking_delta", thinking },
      })
    ),
    sse("content_block_delta", {
      type: "content_block_delta",
      index,
      delta: { type: "signature_delta", signature: "RXVnZW5pY3Mgc2lnbmF0dXJl" },
    }),
    sse("content_block_stop", { type: "content_block_stop", index }),
  ];
}

/** A tool_use block at `index` whose input's JSON text comes in these deltas. */
export function toolBlock(index: number, name: string, deltas: string[]): string[] {
  return [
    sse("content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: `toolu_${index}`, name, input: {} },
    }),
    ...deltas.map((partial_json) =>
      sse("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json },
      })
    ),
    sse("content_block_stop", { type: "content_block_stop", index }),
  ];
}

/** OpenAI chat completion chunks: the text in these deltas, then the tool calls' arguments. */
export function openaiChunks(
  deltas: string[],
  calls: { name: string; arguments: string[] }[] = [],
): string[] {
  const chunk = (delta: unknown, finish: string | null = null) =>
    sse(undefined, {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1700000000,
      model: "gpt-test",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
  return [
    chunk({ role: "assistant", content: "" }),
    ...deltas.map((content) => chunk({ content })),
    ...calls.flatMap((call, index) => [
      chunk({
        tool_calls: [{
          index,
          id: `call_${index}`,
          type: "function",
          function: { name: call.name, arguments: "" },
        }],
      }),
      ...call.arguments.map((part) =>
        chunk({ tool_calls: [{ index, function: { arguments: part } }] })
      ),
    ]),
    chunk({}, calls.length > 0 ? "tool_calls" : "stop"),
    sse(undefined, {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1700000000,
      model: "gpt-test",
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }),
    sse(undefined, "[DONE]"),
  ];
}

/** One event as the worker read it. */
export interface ReadEvent {
  event: string | null;
  data: string;
}

/**
 * Reads an answer's events strictly: every event ends with a blank line, has only `event:` and
 * `data:` lines, and its data is JSON (or OpenAI's `[DONE]`); anything else fails the test.
 */
export function readEvents(text: string): ReadEvent[] {
  assert(text === "" || text.endsWith("\n\n"), "the answer does not end with a whole event");
  const events: ReadEvent[] = [];
  for (const block of text.split("\n\n").slice(0, -1)) {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
      else throw new Error(`a line that is neither event: nor data: ${JSON.stringify(line)}`);
    }
    const joined = data.join("\n");
    if (joined !== "[DONE]") JSON.parse(joined); // throws when the data is not JSON
    events.push({ event, data: joined });
  }
  return events;
}

/** What a worker puts together from Anthropic events: each block's text, thinking and JSON. */
export function anthropicBlocks(
  events: ReadEvent[],
): { type: string; text: string; thinking: string; json: string }[] {
  const blocks: { type: string; text: string; thinking: string; json: string }[] = [];
  for (const { data } of events) {
    // deno-lint-ignore no-explicit-any
    const event = JSON.parse(data) as any;
    if (event.type === "content_block_start") {
      const block = event.content_block;
      blocks[event.index] = {
        type: block.type,
        text: block.text ?? "",
        thinking: block.thinking ?? "",
        json: "",
      };
    } else if (event.type === "content_block_delta") {
      const delta = event.delta;
      if (delta.type === "text_delta") blocks[event.index].text += delta.text;
      if (delta.type === "thinking_delta") blocks[event.index].thinking += delta.thinking;
      if (delta.type === "input_json_delta") blocks[event.index].json += delta.partial_json;
    }
  }
  return blocks;
}

/** What a worker puts together from OpenAI chunks: the first choice's text and call arguments. */
export function openaiParts(events: ReadEvent[]): { text: string; args: string[] } {
  let text = "";
  const args: string[] = [];
  for (const { data } of events) {
    if (data === "[DONE]") break;
    // deno-lint-ignore no-explicit-any
    const chunk = JSON.parse(data) as any;
    const delta = chunk.choices?.[0]?.delta ?? {};
    if (typeof delta.content === "string") text += delta.content;
    for (const call of delta.tool_calls ?? []) {
      args[call.index] = (args[call.index] ?? "") + (call.function?.arguments ?? "");
    }
  }
  return { text, args };
}

/** The vault value the endpoint tests plant, under a name the vault redacts. */
export const SECRET = "sk-split-canary-9a8b7c6d5e4f3021";

/** What a worker sees in place of a vault value. */
export const REDACTED = "[a vault key]";

/** The key a client inside a task sends: the endpoint puts the vault's in its place. */
const PLACEHOLDER = "gurt-placeholder-key";

/** A task whose model endpoint (tasks/<id>/model.sock) the test speaks to, as `service`. */
export interface EndpointTask extends TestTask {
  service: "anthropic" | "openai";
  /** The task's model endpoint, which the task init opens on the task's loopback. */
  modelSocket: string;
}

/**
 * A core whose tasks' model endpoints relay both services to `service`, with `secret` in its vault
 * (which every answer is redacted against), and a task that speaks `kind` to its endpoint.
 */
export async function startEndpointBox(
  kind: "anthropic" | "openai",
  service: { url: string },
  secret = SECRET,
): Promise<{ box: TestBox; task: EndpointTask }> {
  // The endpoint's keys, apart from the vault file the redaction reads.
  const keys: Record<string, string> = {
    ANTHROPIC_API_KEY: "sk-ant-relay-test-key",
    OPENAI_API_KEY: "sk-openai-relay-test-key",
  };
  const box = await startBox({
    toml: `[models]\nanthropic_base_url = "${service.url}"\nopenai_base_url = "${service.url}"\n`,
    core: { vault: { value: (name) => keys[name], names: () => Object.keys(keys) } },
  });
  try {
    const set = await box.admin("PUT", "/api/vault/EXAMPLE_API_KEY", { value: secret });
    assert(set.status === 200, JSON.stringify(set.body));
    const task = await box.startTask();
    const modelSocket = `${box.home}/tasks/${task.id}/model.sock`;
    return { box, task: { ...task, service: kind, modelSocket } };
  } catch (error) {
    await box.close();
    throw error;
  }
}

/** A service, a core relaying to it (startEndpointBox) and a task: what `withEndpoint` hands a test. */
export interface EndpointRun {
  service: SseService;
  box: TestBox;
  task: EndpointTask;
}

/** Runs `work` on a fresh service and a core relaying `kind` to it, both closed afterwards. */
export async function withEndpoint(
  kind: "anthropic" | "openai",
  work: (relay: EndpointRun) => Promise<void>,
): Promise<void> {
  const service = startSseService();
  try {
    const { box, task } = await startEndpointBox(kind, service);
    try {
      await work({ service, box, task });
    } finally {
      await box.close();
    }
  } finally {
    await service.close();
  }
}

/**
 * Sends one model request to the task's model endpoint as a client inside the task would (its
 * placeholder key, its service's path), streamed unless the body says otherwise.
 */
export async function askModel(
  task: EndpointTask,
  body: Record<string, unknown> = {},
): Promise<Response> {
  const anthropic = task.service === "anthropic";
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: task.modelSocket } });
  const response = await fetch(
    `http://127.0.0.1${anthropic ? "/v1/messages" : "/v1/chat/completions"}`,
    {
      method: "POST",
      client,
      headers: anthropic
        ? {
          "content-type": "application/json",
          "x-api-key": PLACEHOLDER,
          "anthropic-version": "2023-06-01",
        }
        : { "content-type": "application/json", authorization: `Bearer ${PLACEHOLDER}` },
      body: JSON.stringify({
        model: anthropic ? "claude-sonnet-5-5" : "gpt-5",
        max_tokens: 64,
        stream: true,
        messages: [{ role: "user", content: "say the key" }],
        ...body,
      }),
    },
  );
  // The client lives as long as the answer is read.
  const reader = response.body;
  if (reader === null) {
    client.close();
    return response;
  }
  const closing = reader.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({ flush: () => client.close() }),
  );
  return new Response(closing, { status: response.status, headers: response.headers });
}

/** `text` as a worker's copy of the answer, for gurt's own worker to read. */
export function asAnswer(text: string): Response {
  return new Response(text, { headers: { "content-type": "text/event-stream" } });
}

/** `text` with every character written as a JSON \u escape. */
export function escaped(text: string): string {
  return [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
}

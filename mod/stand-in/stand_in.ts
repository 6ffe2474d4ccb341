/**
 * `gurt dev model-stand-in`: one loopback HTTP server that stands in for the model services, so a
 * person can try gurt with no network and no key: Anthropic Messages (`POST /v1/messages`, and
 * `GET /v1/models`, which `gurt vault set ANTHROPIC_API_KEY`'s check calls), OpenAI Responses
 * (`POST …/responses`) and Chat Completions (`POST …/chat/completions`), each streamed as
 * server-sent events when the request asks, else whole. Its script calls one tool, then answers
 * `FINAL: <the tool's result>`: `example.echo` (`gurt loop`'s `call_tool`, or an agent's
 * `…example__echo` MCP tool), with `{"text": "hi from <agent>"}`.
 */
import { anthropicHandler, type FakeAnthropicRequest } from "./anthropic.ts";
import { chatHandler, type FakeRequest as ChatRequest } from "./chat.ts";
import { type FakeRequest as ResponsesRequest, responsesHandler } from "./responses.ts";

/** A running stand-in. */
export interface StandIn {
  /** Its origin, `http://127.0.0.1:8089`: an Anthropic base URL, and OpenAI's without `/v1`. */
  url: string;
  close(): Promise<void>;
}

/** Where it listens and what it says. */
export interface StandInOptions {
  hostname: string;
  /** 0 for a port the system chooses. */
  port: number;
  /** Called once per request: its method and path, never its body or headers. */
  log?: (line: string) => void;
  /** Stops the server when aborted. */
  signal?: AbortSignal;
}

/** Starts the stand-in. */
export function startStandIn(options: StandInOptions): Promise<StandIn> {
  // The tests' fakes keep every request; this one, which may run for hours, keeps none.
  const anthropic = anthropicHandler({}, { push: (_: FakeAnthropicRequest) => 0 });
  const responses = responsesHandler({ agent: "agent" }, { push: (_: ResponsesRequest) => 0 });
  const chat = chatHandler({ agent: "agent" }, { push: (_: ChatRequest) => 0 });
  const ready = Promise.withResolvers<StandIn>();
  const server = Deno.serve({
    hostname: options.hostname,
    port: options.port,
    signal: options.signal,
    onListen: (addr) => {
      const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
      ready.resolve({ url: `http://${host}:${addr.port}`, close: () => server.shutdown() });
    },
  }, (req) => {
    const path = new URL(req.url).pathname;
    options.log?.(`${req.method} ${path}`);
    if (path.endsWith("/chat/completions")) return chat(req);
    if (path.endsWith("/responses")) return responses(req);
    // GET /v1/models answers in Anthropic's shape when asked as Anthropic is (x-api-key).
    if (path.endsWith("/models") && !req.headers.has("x-api-key")) return chat(req);
    return anthropic(req);
  });
  return ready.promise;
}

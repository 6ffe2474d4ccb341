/**
 * MCP's JSON-RPC 2.0 over stdio, the part a server of tools speaks: one message per line in and
 * out, requests answered as their methods return (a slow tools/call holds up nothing else), the
 * standard errors for what is not a request it can answer, and a cancelled request left unanswered.
 *
 * Written here rather than taken from @modelcontextprotocol/sdk's Server so that `gurt mcp`
 * answers initialize and tools/list within 150 ms of starting: the SDK's server module takes longer
 * than that to load (bench/mcp_bench.ts). The SDK's own client and a raw line-by-line client hold
 * it to the protocol (tests/mcp), and the protocol versions are the SDK's (raw_client_test.ts).
 */

/** The protocol version answered to a client that asks for one not in the list below. */
export const LATEST_PROTOCOL_VERSION = "2025-11-25";

/** The MCP versions spoken, newest first: those of @modelcontextprotocol/sdk 1.32. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  "2025-06-18",
  "2025-03-26",
  "2024-11-05",
  "2024-10-07",
];

/**
 * What `initialize` answers: the client's protocol version when it is one spoken here, else the
 * latest; the server's capabilities and name as given.
 */
export function initializeAnswer(
  params: Record<string, unknown>,
  server: { name: string; version: string; capabilities: Record<string, unknown> },
): Record<string, unknown> {
  const asked = params.protocolVersion;
  const version = typeof asked === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
    ? asked
    : LATEST_PROTOCOL_VERSION;
  return {
    protocolVersion: version,
    capabilities: server.capabilities,
    serverInfo: { name: server.name, version: server.version },
  };
}

/** JSON-RPC's error codes. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** An error a method throws to answer with that JSON-RPC error rather than -32603. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
    this.name = "RpcError";
  }
}

/** What a method is told of its request besides its params. */
export interface MethodCall {
  /** Aborts when the client cancels the request (notifications/cancelled). */
  signal: AbortSignal;
}

/** A method: its params (an object, `{}` when absent) to its result. */
export type Method = (params: Record<string, unknown>, call: MethodCall) => unknown;

/** Sends the client a notification, in order with the answers. */
export type Notify = (method: string, params: Record<string, unknown>) => void;

type Id = string | number;

/**
 * Serves the methods `serve` gives (it is handed the way to send notifications) on `io` until its
 * input ends. A method that throws is answered with the error's code (RpcError) or -32603, and its
 * message. A cancelled request's signal aborts, and it goes unanswered. With `settle`, the requests
 * still running when the input ends are answered before it resolves (`settle` is told how many);
 * without, they are dropped.
 */
export async function serveLines(
  io: { input: ReadableStream<Uint8Array>; output: WritableStream<Uint8Array> },
  serve: (notify: Notify) => Readonly<Record<string, Method>>,
  options: { settle?: (running: number) => void } = {},
): Promise<void> {
  const out = new LineWriter(io.output);
  const methods = serve((method, params) => out.send({ jsonrpc: "2.0", method, params }));
  const running = new Map<Id, AbortController>();
  const cancelled = new Set<Id>();
  const answering = new Set<Promise<void>>();

  function answer(id: Id, work: (call: MethodCall) => unknown): void {
    const controller = new AbortController();
    running.set(id, controller);
    const done = Promise.resolve({ signal: controller.signal }).then(work).then(
      (result) => ({ jsonrpc: "2.0", id, result }),
      (error) =>
        failure(id, error instanceof RpcError ? error.code : INTERNAL_ERROR, messageOf(error)),
    ).then((reply) => {
      running.delete(id);
      if (!cancelled.delete(id)) out.send(reply);
    });
    answering.add(done);
    done.then(() => answering.delete(done));
  }

  function receive(line: string): void {
    if (line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return out.send(failure(null, PARSE_ERROR, "Parse error: a line that is not JSON"));
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      return out.send(failure(null, INVALID_REQUEST, "Invalid Request: one JSON object a line"));
    }
    const fields = message as Record<string, unknown>;
    const id = isId(fields.id) ? fields.id : null;
    if (typeof fields.method !== "string") {
      // A response (we send no requests, only notifications) is dropped; anything else is invalid.
      if (id !== null && ("result" in fields || "error" in fields)) return;
      return out.send(failure(id, INVALID_REQUEST, "Invalid Request: no method"));
    }
    if (!("id" in fields)) return notified(fields.method, fields.params);
    if (id === null) return out.send(failure(null, INVALID_REQUEST, "Invalid Request: bad id"));
    if (fields.jsonrpc !== "2.0") {
      return out.send(failure(id, INVALID_REQUEST, 'Invalid Request: jsonrpc must be "2.0"'));
    }
    const method = Object.hasOwn(methods, fields.method) ? methods[fields.method] : undefined;
    if (method === undefined) {
      return out.send(failure(id, METHOD_NOT_FOUND, `Method not found: ${fields.method}`));
    }
    const params = fields.params ?? {};
    if (typeof params !== "object" || params === null || Array.isArray(params)) {
      return out.send(failure(id, INVALID_PARAMS, "Invalid params: params must be an object"));
    }
    answer(id, (call) => method(params as Record<string, unknown>, call));
  }

  /** A notification: a cancelled request goes unanswered; any other needs nothing from us. */
  function notified(method: string, params: unknown): void {
    if (method !== "notifications/cancelled") return;
    const requestId = (params as { requestId?: unknown } | undefined)?.requestId;
    const controller = isId(requestId) ? running.get(requestId) : undefined;
    if (controller === undefined || cancelled.has(requestId as Id)) return;
    cancelled.add(requestId as Id);
    controller.abort(new DOMException("the client cancelled the request", "AbortError"));
  }

  let buffered = "";
  for await (const text of io.input.pipeThrough(new TextDecoderStream())) {
    buffered += text;
    let end: number;
    while ((end = buffered.indexOf("\n")) !== -1) {
      receive(buffered.slice(0, end).replace(/\r$/, ""));
      buffered = buffered.slice(end + 1);
    }
  }
  if (buffered !== "") receive(buffered);
  if (options.settle !== undefined) {
    options.settle(answering.size);
    await Promise.all([...answering]);
  }
  await out.drained();
}

/** Writes messages one line each, in order, never two at once. */
class LineWriter {
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #encoder = new TextEncoder();
  #last: Promise<void> = Promise.resolve();

  constructor(output: WritableStream<Uint8Array>) {
    this.#writer = output.getWriter();
  }

  send(message: unknown): void {
    const bytes = this.#encoder.encode(`${JSON.stringify(message)}\n`);
    // A client that has gone cannot be told anything; its input ends and so does the relay.
    this.#last = this.#last.then(() => this.#writer.write(bytes)).catch(() => {});
  }

  /** Resolves once every message sent so far is written (or could not be). */
  drained(): Promise<void> {
    return this.#last;
  }
}

function isId(value: unknown): value is Id {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

function failure(id: Id | null, code: number, message: string): unknown {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * node:http's request and response, as the fetch handler every gurt door is written against sees
 * them: a real Request (its body a stream read as the handler reads it, its signal aborted when
 * the client goes away before its answer is sent) and a Response written back as it comes, with
 * backpressure, a stream event by event.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Buffer } from "node:buffer";

/** The most of a refused body read and dropped before its connection is cut (a task's 20 MiB). */
const DRAIN_BYTES = 24 * 1024 * 1024;
/**
 * A body of at most this many declared bytes that came whole with its head (node:http parses the
 * chunk read to its end before the request's first await) is given to the handler as bytes, not
 * as a stream fed event by event; a larger one, or one still arriving, is a stream.
 */
const SMALL_BODY = 64 * 1024;
/** The most of an answer gathered to be sent whole, with its length (a JSON answer's). */
const IN_MEMORY_BYTES = 256 * 1024;

/** What a door does with a request. */
export type FetchHandler = (
  request: Request,
  conn: ConnInfo,
) => Response | Promise<Response>;

/** The connection a request came on. */
export interface ConnInfo {
  remoteAddr: Deno.Addr;
}

/** How a door answers what its handler could not. */
export interface BridgeOptions {
  /** The answer when the handler throws. */
  onError(error: unknown): Response;
  /** Told when an answer's body broke off after its head was sent (the client sees it cut short). */
  onBrokenAnswer(error: unknown): void;
}

/** Answers one node:http request with `handler`. */
export async function bridgeRequest(
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  handler: (request: Request) => Response | Promise<Response>,
  options: BridgeOptions,
): Promise<void> {
  const gone = new AbortController();
  outgoing.once("close", () => {
    if (!outgoing.writableFinished) gone.abort(new Error("the client closed its connection"));
  });
  // A body the handler left unread is read off the wire once the answer is sent.
  outgoing.once("finish", () => {
    if (!incoming.readableEnded) incoming.resume();
  });
  let request: Request;
  try {
    const declared = declaredLength(incoming);
    if (declared > 0 && declared <= SMALL_BODY && !incoming.complete) await null;
    request = toRequest(incoming, declared, gone.signal);
  } catch (error) {
    await send(outgoing, errorAnswer(400, unreadable(error)), options, gone.signal);
    return;
  }
  let response: Response;
  try {
    response = await handler(request);
  } catch (error) {
    response = options.onError(error);
  }
  await send(outgoing, response, options, gone.signal);
}

const CONNECTION_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
]);

/** A request's body that ended before its whole length arrived: the client's fault. */
export class IncompleteBodyError extends Error {
  constructor() {
    super("the client's request ended before its body did");
    this.name = "IncompleteBodyError";
  }
}

/** The sentence a door answers (400) for a request whose body the client cut short. */
export function incompleteBodyMessage(what: string): string {
  return `${what}: the request ended before its whole body arrived (the client stopped ` +
    "sending, or its connection was cut), so nothing was done; send the request again.";
}

/** A `{error}` answer, the shape of every gurt door's refusals. */
export function errorAnswer(status: number, error: string): Response {
  return Response.json({ error }, { status });
}

function unreadable(error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return `the request could not be read as HTTP: ${reason}`;
}

/**
 * The body's declared length: 0 when the request has none (no Content-Length and not chunked),
 * -1 when it is chunked (or its length unreadable), so of a length not known before its end.
 */
function declaredLength(incoming: IncomingMessage): number {
  if (incoming.headers["transfer-encoding"] !== undefined) return -1;
  const length = incoming.headers["content-length"];
  if (length === undefined) return 0;
  const count = Number(length);
  return Number.isSafeInteger(count) && count >= 0 ? count : -1;
}

function toRequest(incoming: IncomingMessage, declared: number, signal: AbortSignal): Request {
  // Pairs, not a Headers: a Request made from pairs costs half as much.
  const headers: [string, string][] = [];
  let host: string | undefined;
  const raw = incoming.rawHeaders;
  for (let at = 0; at + 1 < raw.length; at += 2) {
    // HTTP/2's pseudo-headers (:path, :authority) are the request's target and host.
    if (raw[at].startsWith(":")) continue;
    headers.push([raw[at], raw[at + 1]]);
    if (host === undefined && raw[at].toLowerCase() === "host") host = raw[at + 1];
  }
  const authority = (incoming as { authority?: string }).authority;
  if (host === undefined && typeof authority === "string") {
    host = authority;
    headers.push(["host", authority]);
  }
  const target = incoming.url ?? "/";
  // A client that takes the socket for a proxy (Deno's fetch with a Unix-socket client) sends
  // the absolute form, `http://task/v1/messages`.
  const absolute = /^https?:\/\//i.test(target);
  if (!absolute && !target.startsWith("/")) {
    throw new Error(`the request target ${JSON.stringify(target.slice(0, 80))} is not a path`);
  }
  const method = incoming.method ?? "GET";
  // The host and the target joined as they came, as Deno.serve did: a Host that carries a path
  // is part of the path checked and sent.
  const url = absolute ? new URL(target) : new URL(`http://${host ?? "localhost"}${target}`);
  if (method === "GET" || method === "HEAD" || declared === 0) {
    return new Request(url, { method, headers, signal });
  }
  if (declared > 0 && declared <= SMALL_BODY && incoming.complete) {
    // Read whole already: the bytes in the message's buffer, without a stream.
    const whole = incoming.read() as Uint8Array<ArrayBuffer> | null;
    if (whole !== null && whole.byteLength === declared) {
      return new Request(url, { method, headers, body: whole, signal });
    }
    if (whole !== null) incoming.unshift(whole);
  }
  const body = bodyOf(incoming);
  return new Request(url, { method, headers, body, signal, duplex: "half" } as RequestInit);
}

/** The request's body as it arrives, read from the wire only as fast as the handler reads it. */
function bodyOf(incoming: IncomingMessage): ReadableStream<Uint8Array> {
  // After a cancel (a handler that refuses a body too large) the rest is read and dropped, so a
  // client still sending it gets its answer, as Deno.serve did; past DRAIN_BYTES it is cut off.
  let dropped = -1;
  let ended = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      incoming.on("data", (chunk: Uint8Array) => {
        if (ended && dropped < 0) return; // after a cut: the stream has failed
        if (dropped >= 0) {
          dropped += chunk.byteLength;
          if (dropped > DRAIN_BYTES) incoming.destroy();
          return;
        }
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
      });
      incoming.once("end", () => {
        if (ended) return;
        ended = true;
        if (dropped < 0) controller.close();
      });
      // A client that closes its connection (or its half of it) before the end of its body:
      // the read fails.
      const cut = () => {
        if (!ended && dropped < 0) controller.error(new IncompleteBodyError());
        ended = true;
      };
      incoming.once("close", cut);
      incoming.once("aborted", cut);
      incoming.pause();
    },
    pull() {
      incoming.resume();
    },
    cancel() {
      dropped = 0;
      incoming.resume();
    },
  }, { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength });
}

async function send(
  outgoing: ServerResponse,
  response: Response,
  options: BridgeOptions,
  gone: AbortSignal,
): Promise<void> {
  outgoing.statusCode = response.status;
  const cookies = response.headers.getSetCookie();
  const h2 = outgoing.req?.httpVersion === "2.0";
  for (const [name, value] of response.headers) {
    // HTTP/2 has no connection-specific headers (node:http2 throws on one).
    if (h2 && CONNECTION_HEADERS.has(name)) continue;
    if (name !== "set-cookie") outgoing.setHeader(name, value);
  }
  if (cookies.length > 0) outgoing.setHeader("set-cookie", cookies);
  if (response.body === null) {
    outgoing.end();
    return;
  }
  const reader = response.body.getReader();
  const stop = () => reader.cancel(gone.reason).catch(() => {});
  gone.addEventListener("abort", stop, { once: true });
  try {
    const start = await bodyStart(reader);
    if (start.pending === null) {
      // A body already in memory (a JSON answer) goes with its length, as Deno.serve sent it.
      const whole = Buffer.concat(start.chunks);
      if (!outgoing.hasHeader("content-length")) outgoing.setHeader("content-length", whole.length);
      outgoing.end(whole);
      return;
    }
    for (const chunk of start.chunks) outgoing.write(chunk);
    let next = start.pending;
    while (true) {
      const { done, value } = await next;
      if (done) break;
      const room = outgoing.write(value);
      // The next chunk is asked for while this one is written: one chunk ahead, no more.
      next = reader.read();
      if (!room) {
        next.catch(() => {});
        await drained(outgoing);
      }
      if (gone.aborted) return;
    }
    outgoing.end();
  } catch (error) {
    if (!gone.aborted) options.onBrokenAnswer(error);
    outgoing.destroy();
  } finally {
    gone.removeEventListener("abort", stop);
  }
}

/**
 * The chunks of a body that are already in memory (each read settles within a few turns of the
 * microtask queue, as a Response made from a string or bytes does), and the read still pending
 * when one is not (a model's answer, a live feed, whatever waits on I/O or a timer) or when they
 * pass IN_MEMORY_BYTES (a long body made as fast as it is read goes as a stream, not gathered
 * whole); pending is null when the body ended, all in memory.
 */
export async function bodyStart(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<
  { chunks: Uint8Array[]; pending: Promise<ReadableStreamReadResult<Uint8Array>> | null }
> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (true) {
    const read = reader.read();
    const next = await Promise.race([read, microtaskTurns(IN_MEMORY_TURNS)]);
    if (next === WAITING) return { chunks, pending: read };
    if (next.done) return { chunks, pending: null };
    chunks.push(next.value);
    size += next.value.byteLength;
    if (size > IN_MEMORY_BYTES) return { chunks, pending: reader.read() };
  }
}

/** How many microtask turns a read of a body in memory may take (a few pipes of streams). */
const IN_MEMORY_TURNS = 8;
const WAITING = Symbol("waiting");

/** Resolves after `turns` turns of the microtask queue, before any I/O or timer. */
function microtaskTurns(turns: number): Promise<typeof WAITING> {
  let chain: Promise<unknown> = Promise.resolve();
  for (let turn = 1; turn < turns; turn++) chain = chain.then();
  return chain.then(() => WAITING);
}

function drained(outgoing: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      outgoing.off("drain", done);
      outgoing.off("close", done);
      resolve();
    };
    outgoing.once("drain", done);
    outgoing.once("close", done);
  });
}

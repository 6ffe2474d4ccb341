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

/** What a door does with a request. */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

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
  handler: FetchHandler,
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
    request = toRequest(incoming, gone.signal);
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

/** A `{error}` answer, the shape of every gurt door's refusals. */
export function errorAnswer(status: number, error: string): Response {
  return Response.json({ error }, { status });
}

function unreadable(error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error);
  return `the request could not be read as HTTP: ${reason}`;
}

function toRequest(incoming: IncomingMessage, signal: AbortSignal): Request {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let at = 0; at + 1 < raw.length; at += 2) headers.append(raw[at], raw[at + 1]);
  const target = incoming.url ?? "/";
  // A client that takes the socket for a proxy (Deno's fetch with a Unix-socket client) sends
  // the absolute form, `http://task/v1/messages`.
  const absolute = /^https?:\/\//i.test(target);
  if (!absolute && !target.startsWith("/")) {
    throw new Error(`the request target ${JSON.stringify(target.slice(0, 80))} is not a path`);
  }
  const url = absolute
    ? new URL(target)
    : new URL(target, `http://${headers.get("host") ?? "localhost"}`);
  const method = incoming.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? null : bodyOf(incoming);
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
        if (dropped >= 0) {
          dropped += chunk.byteLength;
          if (dropped > DRAIN_BYTES) incoming.destroy();
          return;
        }
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 0) <= 0) incoming.pause();
      });
      incoming.once("end", () => {
        ended = true;
        if (dropped < 0) controller.close();
      });
      // A client that closes its connection before the end of its body: the read fails.
      incoming.once("close", () => {
        if (!ended && dropped < 0) {
          controller.error(new Error("the client's request ended before its body did"));
        }
      });
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
  for (const [name, value] of response.headers) {
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
      if (!outgoing.write(value)) await drained(outgoing);
      if (gone.aborted) return;
      next = reader.read();
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
 * The chunks of a body that come without waiting for a timer's turn, and the read still pending
 * when one would (a model's answer, a live feed); pending is null when the body ended, all in
 * memory.
 */
async function bodyStart(
  reader: ReadableStreamDefaultReader<Uint8Array>,
): Promise<
  { chunks: Uint8Array[]; pending: Promise<ReadableStreamReadResult<Uint8Array>> | null }
> {
  const turn = Promise.withResolvers<"waiting">();
  const timer = setTimeout(() => turn.resolve("waiting"), 0);
  const chunks: Uint8Array[] = [];
  try {
    while (true) {
      const read = reader.read();
      const next = await Promise.race([read, turn.promise]);
      if (next === "waiting") return { chunks, pending: read };
      if (next.done) return { chunks, pending: null };
      chunks.push(next.value);
    }
  } finally {
    clearTimeout(timer);
  }
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

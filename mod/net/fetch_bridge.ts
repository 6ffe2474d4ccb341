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
  /**
   * Given the request's cut: called when the client ends its side, it fails a body still due (the
   * handler answers it as the client's incomplete request) and says whether it did.
   */
  watchCut?(cut: () => boolean): void;
}

/** Why a body's read failed when its client stopped sending before its end. */
const CUT_SHORT = "the client's request ended before its body did";

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
    const made = toRequest(incoming, gone.signal);
    request = made.request;
    options.watchCut?.(made.cut);
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

function toRequest(
  incoming: IncomingMessage,
  signal: AbortSignal,
): { request: Request; cut: () => boolean } {
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
  // A path is put after the origin as it is: `//evil.example/x` is the path //evil.example/x, as
  // Deno.serve read it, never another host.
  const url = absolute ? new URL(target) : new URL(`${originOf(headers.get("host"))}${target}`);
  const method = incoming.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? null : bodyOf(incoming);
  const request = new Request(url, {
    method,
    headers,
    body: body?.stream ?? null,
    signal,
    duplex: "half",
  } as RequestInit);
  return { request, cut: body?.cut ?? (() => false) };
}

/** `http://` and the Host header's name if it is one, else `http://localhost`. */
function originOf(host: string | null): string {
  const origin = new URL("http://localhost");
  if (host !== null) origin.host = host; // a value that is not a host leaves localhost
  return origin.origin;
}

/**
 * The request's body as it arrives, read from the wire only as fast as the handler reads it, and
 * its cut: fails the body if it is still due, saying whether it was.
 */
function bodyOf(
  incoming: IncomingMessage,
): { stream: ReadableStream<Uint8Array>; cut: () => boolean } {
  // After a cancel (a handler that refuses a body too large) the rest is read and dropped, so a
  // client still sending it gets its answer, as Deno.serve did; past DRAIN_BYTES it is cut off.
  let dropped = -1;
  let ended = false;
  let failed = false;
  let fail: (() => void) | null = null;
  const cut = (): boolean => {
    if (ended || failed || dropped >= 0 || fail === null) return false;
    fail();
    return true;
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      fail = () => {
        failed = true;
        controller.error(new Error(CUT_SHORT));
      };
      incoming.on("data", (chunk: Uint8Array) => {
        if (failed) return;
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
        if (!ended && !failed && dropped < 0) fail?.();
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
  return { stream, cut };
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

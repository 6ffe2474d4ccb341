/**
 * HTTP + JSON over a Unix socket: how owner commands, workers and tests reach gurt's sockets.
 *
 * A plain HTTP/1.1 exchange on `Deno.connect({transport: "unix"})`, one connection per request,
 * except for a request the caller marks as safe to send twice (a /call with its key): that one may
 * go on a connection kept from an earlier answer, and is sent again on a new connection if the
 * server had closed the kept one before answering.
 * Deno's fetch with a Unix-socket client needs net permission for the URL's host and looks that
 * host up in DNS first, which on a box without a resolver stalls a request for five seconds now and
 * then; a role that may open only its socket should need nothing else, and be slowed by nothing.
 * Dropping the connection (an aborted request) is how the server learns its requester went away.
 */

import { Buffer } from "node:buffer";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A JSON answer: the status and the parsed body (the text, where it is not JSON). */
export interface JsonAnswer {
  status: number;
  body: unknown;
}

/** The socket could not be reached: not there, refused, or closed early. */
export class SocketUnreachableError extends Error {
  constructor(readonly socket: string, cause: unknown) {
    super(`cannot reach ${socket}: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "SocketUnreachableError";
  }
}

/** A request read whole; `repeatable` marks one that is safe to send twice (see the top). */
interface WholeRequest {
  method: string;
  path: string;
  body?: string | Uint8Array;
  signal?: AbortSignal;
  repeatable?: boolean;
}

/**
 * Sends one request with an optional JSON body over the socket and parses the JSON answer. With
 * `repeatable`, the request may go on a kept connection and be sent a second time (on a new one)
 * if the server closed that connection before answering: only for a request whose second copy
 * changes nothing, such as a /call with its key (same key, same result).
 */
export async function requestJson(
  socket: string,
  request: {
    method: string;
    path: string;
    body?: unknown;
    signal?: AbortSignal;
    repeatable?: boolean;
  },
): Promise<JsonAnswer> {
  const answer = await requestRaw(socket, {
    ...request,
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  });
  const text = decoder.decode(answer.body);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the caller sees the text.
  }
  return { status: answer.status, body };
}

/** One raw exchange, read whole: the status, the headers (lowercase names) and the body's bytes. */
export async function requestRaw(
  socket: string,
  request: WholeRequest,
): Promise<{ status: number; headers: Map<string, string>; body: Uint8Array }> {
  request.signal?.throwIfAborted();
  const body = typeof request.body === "string" ? encoder.encode(request.body) : request.body;
  const repeatable = request.repeatable === true;
  const bytes = requestBytes(request.method, request.path, body, repeatable);
  const kept = repeatable ? idle.get(socket)?.pop() : undefined;
  if (kept !== undefined) {
    const answer = await exchangeWhole(socket, kept, { bytes, signal: request.signal, kept: true });
    if (answer !== null) return answer;
    // The server closed the kept connection before it answered: send the request on a new one.
  }
  let conn: Deno.UnixConn;
  try {
    conn = await Deno.connect({ transport: "unix", path: socket });
  } catch (error) {
    throw new SocketUnreachableError(socket, error);
  }
  const fresh = await exchangeWhole(socket, new ByteReader(conn), {
    bytes,
    signal: request.signal,
    kept: false,
    keep: repeatable,
  });
  if (fresh === null) {
    throw new SocketUnreachableError(socket, "the answer ended before its headers");
  }
  return fresh;
}

/** Connections kept after a whole answer to a repeatable request, by socket: at most a few each. */
const idle = new Map<string, ByteReader[]>();
const MAX_IDLE = 4;

/** Closes the connections kept for repeatable requests: to `socket`, or to every socket. */
export function closeKeptConnections(socket?: string): void {
  for (const [path, readers] of idle) {
    if (socket !== undefined && path !== socket) continue;
    for (const reader of readers) {
      try {
        reader.conn.close();
      } catch {
        // already closed
      }
    }
    idle.delete(path);
  }
}

/**
 * Writes the request and reads the whole answer on `reader`'s connection. Null only when the
 * connection was a kept one and it ended before a byte of the answer arrived.
 */
async function exchangeWhole(
  socket: string,
  reader: ByteReader,
  request: { bytes: Uint8Array; signal?: AbortSignal; kept: boolean; keep?: boolean },
): Promise<{ status: number; headers: Map<string, string>; body: Uint8Array } | null> {
  const conn = reader.conn;
  const close = () => {
    try {
      conn.close();
    } catch {
      // already closed
    }
  };
  request.signal?.addEventListener("abort", close, { once: true });
  const receivedBefore = reader.received;
  try {
    await writeAll(conn, request.bytes);
    const head = await reader.readUntil(HEAD_END);
    if (head === null) throw new Error("the answer ended before its headers");
    const { status, headers } = parseHead(head);
    const chunks: Uint8Array[] = [];
    const chunked = headers.get("transfer-encoding")?.toLowerCase() === "chunked";
    const length = headers.get("content-length");
    let left = length === undefined ? Infinity : Number(length);
    const framed = chunked || length !== undefined;
    if (status !== 204 && status !== 304) {
      while (true) {
        const next = chunked ? await reader.nextChunk() : await reader.upTo(left);
        if (next === null) break;
        if (!chunked) left -= next.length;
        chunks.push(next);
      }
    }
    request.signal?.removeEventListener("abort", close);
    const reusable = (request.kept || request.keep === true) && framed &&
      headers.get("connection")?.toLowerCase() !== "close" && reader.drained;
    const list = idle.get(socket) ?? [];
    if (reusable && list.length < MAX_IDLE) {
      list.push(reader);
      idle.set(socket, list);
    } else {
      close();
    }
    return { status, headers, body: Buffer.concat(chunks) };
  } catch (error) {
    request.signal?.removeEventListener("abort", close);
    close();
    if (request.signal?.aborted) throw request.signal.reason;
    if (request.kept && reader.received === receivedBefore) return null;
    throw new SocketUnreachableError(socket, error);
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

function indexOf(bytes: Uint8Array, pattern: number[], from = 0): number {
  outer: for (let i = from; i + pattern.length <= bytes.length; i++) {
    for (let j = 0; j < pattern.length; j++) if (bytes[i + j] !== pattern[j]) continue outer;
    return i;
  }
  return -1;
}

/**
 * One exchange whose answer is read as it arrives: a Response whose body streams from the socket
 * (chunked or not). Cancelling the body, or aborting the signal, closes the connection.
 */
export function requestStream(
  socket: string,
  request: { method: string; path: string; body?: unknown; signal?: AbortSignal },
): Promise<Response> {
  const body = request.body === undefined
    ? undefined
    : encoder.encode(JSON.stringify(request.body));
  return exchange(socket, { ...request, body });
}

/** Sends the request and answers as soon as the head has arrived; the body streams. */
async function exchange(
  socket: string,
  request: { method: string; path: string; body?: Uint8Array; signal?: AbortSignal },
): Promise<Response> {
  request.signal?.throwIfAborted();
  let conn: Deno.UnixConn;
  try {
    conn = await Deno.connect({ transport: "unix", path: socket });
  } catch (error) {
    throw new SocketUnreachableError(socket, error);
  }
  const close = () => {
    try {
      conn.close();
    } catch {
      // already closed
    }
  };
  request.signal?.addEventListener("abort", close, { once: true });
  const reader = new ByteReader(conn);
  let status: number;
  let headers: Map<string, string>;
  try {
    await writeAll(conn, requestBytes(request.method, request.path, request.body));
    const head = await reader.readUntil(HEAD_END);
    if (head === null) throw new Error("the answer ended before its headers");
    ({ status, headers } = parseHead(head));
  } catch (error) {
    close();
    if (request.signal?.aborted) throw request.signal.reason;
    throw new SocketUnreachableError(socket, error);
  }
  const chunked = headers.get("transfer-encoding")?.toLowerCase() === "chunked";
  const length = headers.get("content-length");
  let left = length === undefined ? Infinity : Number(length);
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = chunked ? await reader.nextChunk() : await reader.upTo(left);
        if (next === null) {
          close();
          controller.close();
          return;
        }
        if (!chunked) left -= next.length;
        controller.enqueue(next);
      } catch (error) {
        close();
        controller.error(error);
      }
    },
    cancel: close,
  });
  const nullBody = status === 204 || status === 304;
  if (nullBody) close();
  return new Response(nullBody ? null : stream, { status, headers: [...headers] });
}

const HEAD_END = [13, 10, 13, 10];

function requestBytes(
  method: string,
  path: string,
  body: Uint8Array | undefined,
  keepAlive = false,
): Uint8Array {
  const head = [
    `${method} ${path} HTTP/1.1`,
    "host: gurt",
    keepAlive ? "connection: keep-alive" : "connection: close",
    ...(body === undefined
      ? []
      : ["content-type: application/json", `content-length: ${body.length}`]),
    "",
    "",
  ].join("\r\n");
  return Buffer.concat([encoder.encode(head), body ?? new Uint8Array()]);
}

function parseHead(head: Uint8Array): { status: number; headers: Map<string, string> } {
  const lines = decoder.decode(head).split("\r\n");
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
  if (!status) throw new Error("the answer is not HTTP/1.1");
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) {
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
  }
  return { status: Number(status[1]), headers };
}

/** Reads a connection incrementally: up to a pattern, a chunk of a chunked body, or some bytes. */
class ByteReader {
  #pending: Uint8Array = new Uint8Array();
  #ended = false;
  #received = 0;
  readonly #buffer = new Uint8Array(64 * 1024);

  constructor(readonly conn: Deno.UnixConn) {}

  /** How many bytes have arrived on the connection. */
  get received(): number {
    return this.#received;
  }

  /** Whether every byte that arrived has been taken, and the stream has not ended. */
  get drained(): boolean {
    return this.#pending.length === 0 && !this.#ended;
  }

  /** The bytes before `pattern` (which is consumed), or null if the stream ended first. */
  async readUntil(pattern: number[]): Promise<Uint8Array | null> {
    while (true) {
      const at = indexOf(this.#pending, pattern);
      if (at !== -1) {
        const before = this.#pending.slice(0, at);
        this.#pending = this.#pending.slice(at + pattern.length);
        return before;
      }
      if (!(await this.#fill())) return null;
    }
  }

  /** The next chunk's data of a chunked body, or null after the last chunk. */
  async nextChunk(): Promise<Uint8Array | null> {
    const line = await this.readUntil([13, 10]);
    if (line === null) return null;
    const size = parseInt(decoder.decode(line).split(";")[0], 16);
    if (Number.isNaN(size)) throw new Error("a chunk size is not hex");
    if (size === 0) return null;
    while (this.#pending.length < size + 2) {
      if (!(await this.#fill())) throw new Error("the answer ended inside a chunk");
    }
    const data = this.#pending.slice(0, size);
    this.#pending = this.#pending.slice(size + 2);
    return data;
  }

  /** Up to `limit` bytes that have arrived (waiting for some), or null at the end. */
  async upTo(limit: number): Promise<Uint8Array | null> {
    if (limit <= 0) return null;
    if (this.#pending.length === 0 && !(await this.#fill())) return null;
    const take = Math.min(limit, this.#pending.length);
    const data = this.#pending.slice(0, take);
    this.#pending = this.#pending.slice(take);
    return data;
  }

  async #fill(): Promise<boolean> {
    if (this.#ended) return false;
    const n = await this.conn.read(this.#buffer);
    if (n === null) {
      this.#ended = true;
      return false;
    }
    this.#received += n;
    this.#pending = Buffer.concat([this.#pending, this.#buffer.slice(0, n)]);
    return true;
  }
}

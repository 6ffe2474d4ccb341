/**
 * HTTP + JSON over a Unix socket: how owner commands, workers and tests reach gurt's sockets.
 *
 * A plain HTTP/1.1 exchange on `Deno.connect({transport: "unix"})`, one connection per request.
 * Deno's fetch with a Unix-socket client needs net permission for the URL's host and looks that
 * host up in DNS first, which on a box without a resolver stalls a request for five seconds now and
 * then; a role that may open only its socket should need nothing else, and be slowed by nothing.
 * Dropping the connection (an aborted request) is how the server learns its requester went away.
 */

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

/** Sends one request with an optional JSON body over the socket and parses the JSON answer. */
export async function requestJson(
  socket: string,
  request: { method: string; path: string; body?: unknown; signal?: AbortSignal },
): Promise<JsonAnswer> {
  const answer = await requestRaw(socket, {
    method: request.method,
    path: request.path,
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    signal: request.signal,
  });
  const text = new TextDecoder().decode(answer.body);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: the caller sees the text.
  }
  return { status: answer.status, body };
}

/** One raw exchange: the status, the headers (lowercase names) and the body's bytes. */
export async function requestRaw(
  socket: string,
  request: { method: string; path: string; body?: string | Uint8Array; signal?: AbortSignal },
): Promise<{ status: number; headers: Map<string, string>; body: Uint8Array }> {
  request.signal?.throwIfAborted();
  let conn: Deno.UnixConn;
  try {
    conn = await Deno.connect({ transport: "unix", path: socket });
  } catch (error) {
    throw new SocketUnreachableError(socket, error);
  }
  const onAbort = () => conn.close();
  request.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const body = typeof request.body === "string"
      ? new TextEncoder().encode(request.body)
      : request.body;
    const head = [
      `${request.method} ${request.path} HTTP/1.1`,
      "host: gurt",
      "connection: close",
      ...(body === undefined
        ? []
        : ["content-type: application/json", `content-length: ${body.length}`]),
      "",
      "",
    ].join("\r\n");
    await writeAll(conn, concat([new TextEncoder().encode(head), body ?? new Uint8Array()]));
    return parseResponse(await readAll(conn), socket);
  } catch (error) {
    if (request.signal?.aborted) throw request.signal.reason;
    if (error instanceof SocketUnreachableError) throw error;
    throw new SocketUnreachableError(socket, error);
  } finally {
    request.signal?.removeEventListener("abort", onAbort);
    try {
      conn.close();
    } catch {
      // already closed
    }
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

async function readAll(conn: Deno.Conn): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const buffer = new Uint8Array(64 * 1024);
  while (true) {
    const n = await conn.read(buffer);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
  }
  return concat(chunks);
}

function parseResponse(
  bytes: Uint8Array,
  socket: string,
): { status: number; headers: Map<string, string>; body: Uint8Array } {
  const end = indexOf(bytes, [13, 10, 13, 10]);
  if (end === -1) throw new SocketUnreachableError(socket, "the answer ended before its headers");
  const lines = new TextDecoder().decode(bytes.subarray(0, end)).split("\r\n");
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
  if (!status) throw new SocketUnreachableError(socket, "the answer is not HTTP/1.1");
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) {
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
  }
  let body = bytes.subarray(end + 4);
  if (headers.get("transfer-encoding")?.toLowerCase() === "chunked") body = unchunk(body, socket);
  const length = headers.get("content-length");
  if (length !== undefined) body = body.subarray(0, Number(length));
  return { status: Number(status[1]), headers, body };
}

function unchunk(bytes: Uint8Array, socket: string): Uint8Array {
  const parts: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    const lineEnd = indexOf(bytes, [13, 10], at);
    if (lineEnd === -1) break;
    const size = parseInt(new TextDecoder().decode(bytes.subarray(at, lineEnd)), 16);
    if (Number.isNaN(size)) throw new SocketUnreachableError(socket, "a chunk size is not hex");
    if (size === 0) break;
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return concat(parts);
}

function indexOf(bytes: Uint8Array, pattern: number[], from = 0): number {
  outer: for (let i = from; i + pattern.length <= bytes.length; i++) {
    for (let j = 0; j < pattern.length; j++) if (bytes[i + j] !== pattern[j]) continue outer;
    return i;
  }
  return -1;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

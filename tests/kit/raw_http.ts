/**
 * HTTP/1.1 over a Unix socket written by hand, one connection per request (`Connection: close`).
 * The tests that kill the core use it: a connection to a dead core fails at once instead of
 * waiting on a kept client's pool, and the fuzz test can send bytes no fetch would send.
 */
import type { Json } from "./box.ts";

/** A parsed answer: the status and the body, parsed as JSON when it is JSON. */
export interface RawAnswer {
  status: number;
  body: Json;
  /** The body as text. */
  text: string;
}

/**
 * Sends `bytes` as they are (to a Unix socket's path, or a TCP address) and reads until the core
 * closes; "" if it closed without answering. `close` ends the sending side after the bytes.
 */
export async function sendBytes(
  socket: string | Deno.ConnectOptions,
  bytes: Uint8Array,
  close = false,
): Promise<string> {
  const conn = typeof socket === "string"
    ? await Deno.connect({ transport: "unix", path: socket })
    : await Deno.connect(socket);
  try {
    let written = 0;
    while (written < bytes.length) written += await conn.write(bytes.subarray(written));
    if (close) await conn.closeWrite();
    const chunks: Uint8Array[] = [];
    const buffer = new Uint8Array(64 * 1024);
    while (true) {
      let n: number | null;
      try {
        n = await conn.read(buffer);
      } catch (error) {
        if (error instanceof Deno.errors.ConnectionReset) break;
        throw error;
      }
      if (n === null) break;
      chunks.push(buffer.slice(0, n));
    }
    const all = new Uint8Array(chunks.reduce((sum, c) => sum + c.length, 0));
    let offset = 0;
    for (const chunk of chunks) {
      all.set(chunk, offset);
      offset += chunk.length;
    }
    return new TextDecoder().decode(all);
  } finally {
    try {
      conn.close();
    } catch {
      // already closed
    }
  }
}

/** The request line, headers and body of one request, as bytes. */
export function requestBytes(
  request: { method: string; path: string; body?: Uint8Array | string; headers?: string[] },
): Uint8Array {
  const body = typeof request.body === "string"
    ? new TextEncoder().encode(request.body)
    : request.body;
  const head = [
    `${request.method} ${request.path} HTTP/1.1`,
    "Host: gurt.invalid",
    "Connection: close",
    ...(body === undefined
      ? []
      : ["Content-Type: application/json", `Content-Length: ${body.length}`]),
    ...(request.headers ?? []),
    "",
    "",
  ].join("\r\n");
  const headBytes = new TextEncoder().encode(head);
  const out = new Uint8Array(headBytes.length + (body?.length ?? 0));
  out.set(headBytes);
  if (body !== undefined) out.set(body, headBytes.length);
  return out;
}

/** Parses a whole HTTP/1.1 response as read until close. */
export function parseResponse(text: string): RawAnswer {
  const split = text.indexOf("\r\n\r\n");
  if (split === -1) throw new Error(`no complete answer: ${JSON.stringify(text.slice(0, 200))}`);
  const head = text.slice(0, split).split("\r\n");
  const status = Number(head[0].split(" ")[1]);
  let body = text.slice(split + 4);
  if (head.some((h) => /^transfer-encoding:\s*chunked/i.test(h))) body = unchunk(body);
  let parsed: Json = body;
  try {
    parsed = JSON.parse(body);
  } catch {
    // not JSON: the caller sees the text
  }
  return { status, body: parsed, text: body };
}

function unchunk(body: string): string {
  let out = "";
  let rest = body;
  while (true) {
    const end = rest.indexOf("\r\n");
    const size = parseInt(rest.slice(0, end), 16);
    if (!(size > 0)) return out;
    out += rest.slice(end + 2, end + 2 + size);
    rest = rest.slice(end + 2 + size + 2);
  }
}

/** One JSON request over a fresh connection. */
export async function rawJson(
  socket: string,
  request: { method: string; path: string; body?: unknown },
): Promise<RawAnswer> {
  const bytes = requestBytes({
    method: request.method,
    path: request.path,
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  });
  return parseResponse(await sendBytes(socket, bytes));
}

/**
 * A POST to `path` that declares a 1,000-byte body, sends `start` of it and then ends its sending
 * side: the answer as text.
 */
export function sendCutShort(
  socket: string | Deno.ConnectOptions,
  request: { path: string; headers: string[]; start: string },
): Promise<string> {
  const text = [
    `POST ${request.path} HTTP/1.1`,
    ...request.headers,
    "content-length: 1000",
    "",
    request.start,
  ].join("\r\n");
  return sendBytes(socket, new TextEncoder().encode(text), true);
}

/** HTTP + JSON over a Unix socket: how owner commands, workers and tests reach gurt's sockets. */

/**
 * The host name of every URL sent over a Unix socket. Deno checks net permission for a fetch's host
 * even when the client goes to a socket; `.invalid` can never resolve, so a role granted this host
 * can reach nothing with it but its sockets.
 */
export const SOCKET_HOST = "gurt.invalid";

/** The net permission entry a role needs to send requests over its sockets. */
export const SOCKET_HOST_PERMISSION = `${SOCKET_HOST}:80`;

/** A JSON answer: the status and the parsed body. */
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
  const client = clientFor(socket);
  {
    let response: Response;
    try {
      response = await fetch(`http://${SOCKET_HOST}${request.path}`, {
        method: request.method,
        client,
        headers: request.body === undefined ? {} : { "content-type": "application/json" },
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: request.signal,
      });
    } catch (error) {
      if (error instanceof DOMException && error.name === "AbortError") throw error;
      throw new SocketUnreachableError(socket, error);
    }
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: the caller sees the text.
    }
    return { status: response.status, body };
  }
}

/** Sends one JSON request over the socket and returns the raw response, for streamed answers. */
export async function requestStream(
  socket: string,
  request: { method: string; path: string; body?: unknown; signal?: AbortSignal },
): Promise<Response> {
  try {
    return await fetch(`http://${SOCKET_HOST}${request.path}`, {
      method: request.method,
      client: clientFor(socket),
      headers: request.body === undefined ? {} : { "content-type": "application/json" },
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: request.signal,
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === "AbortError") throw error;
    throw new SocketUnreachableError(socket, error);
  }
}

/**
 * One HTTP client per socket, kept for the life of the process. Creating a client per request
 * stalls one request in about twenty-five for five seconds in Deno 2.9; a kept client does not.
 */
const clients = new Map<string, Deno.HttpClient>();

function clientFor(socket: string): Deno.HttpClient {
  let client = clients.get(socket);
  if (client === undefined) {
    client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
    clients.set(socket, client);
  }
  return client;
}

/** Closes the kept client of a socket, for a caller that is done with it. */
export function forgetSocket(socket: string): void {
  clients.get(socket)?.close();
  clients.delete(socket);
}

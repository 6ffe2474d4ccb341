/** How owner commands talk to the core: HTTP + JSON on the admin socket. */
import { requestJson, SocketUnreachableError } from "../net/mod.ts";

/** The core did not answer: it is not running on this home, or the socket is not ours to open. */
export class CoreUnreachableError extends Error {
  constructor(socket: string) {
    super(
      `cannot reach gurt serve at ${socket}: is it running on this box home? see runbook.md#serve-unreachable`,
    );
    this.name = "CoreUnreachableError";
  }
}

/** One admin request; an error status becomes an Error carrying the core's sentence. */
export async function admin(
  socket: string,
  request: { method: "GET" | "POST" | "PUT" | "DELETE"; path: string; body?: unknown },
): Promise<{ status: number; body: Record<string, unknown> }> {
  let answer;
  try {
    answer = await requestJson(socket, request);
  } catch (error) {
    if (error instanceof SocketUnreachableError) throw new CoreUnreachableError(socket);
    throw error;
  }
  const body = (typeof answer.body === "object" && answer.body !== null ? answer.body : {
    error: String(answer.body),
  }) as Record<string, unknown>;
  return { status: answer.status, body };
}

/** The error text of an admin answer. */
export function errorOf(body: Record<string, unknown>): string {
  return typeof body.error === "string" ? body.error : JSON.stringify(body);
}

/**
 * The answer to a request for a path the model endpoint does not relay: a 404 in the service's
 * format. What the client sends is read to its end first (an HTTP/2 client whose body is left
 * unread may see its stream reset instead of the 404), but dropped chunk by chunk: none of it is
 * kept, every chunk is drawn on the task's byte total as it arrives, and reading stops at the body
 * limit, at the total, or when the endpoint closes. The caller holds one of the task's places in
 * the meantime.
 */
import { relayedPaths, type Service } from "./routes.ts";
import { errorAnswer, notFoundMessage } from "./service_errors.ts";

/** What reading an unrelayed body is held to. */
export interface DropLimits {
  /** The most it reads (the endpoint's body limit). */
  most: number;
  /** Draws bytes on the task's total: a sentence stops the reading, null goes on. */
  draw: (count: number) => string | null;
  /** Rejects once the endpoint is closing. */
  closing: Promise<never>;
}

/** Reads and drops `request`'s body, then answers 404 for `at`. */
export async function notRelayedAnswer(
  request: Request,
  at: { service: Service; path: string },
  limits: DropLimits,
): Promise<Response> {
  await dropBody(request, limits);
  const message = notFoundMessage(
    { method: request.method, path: at.path },
    { service: at.service, relayed: relayedPaths(at.service) },
  );
  return errorAnswer(at.service, { error: "not_found", message });
}

/** Reads `request`'s body and keeps none of it; never throws (a body cut off ends the reading). */
async function dropBody(request: Request, limits: DropLimits): Promise<void> {
  if (request.body === null) return;
  const reader = request.body.getReader();
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), limits.closing]);
      if (done) return;
      size += value.byteLength;
      if (size > limits.most || limits.draw(value.byteLength) !== null) return;
    }
  } catch {
    // The client went away or the endpoint is closing: nothing is left to read.
  } finally {
    reader.cancel().catch(() => {});
  }
}

/**
 * A model request's body, read within the endpoint's limits and checked (request_check.ts): the
 * bytes to send, or the answer refusing it, with a refused fetch reported first.
 */
import { readRequestBody } from "../net/mod.ts";
import { type CheckedRequest, checkRequest } from "./request_check.ts";
import type { ModelBlockedEvent } from "./proxy_events.ts";
import type { Service } from "./routes.ts";
import { errorAnswer, incompleteMessage, tooLargeMessage } from "./service_errors.ts";

/** The route of a body to check, and the model to send in place of the one it names. */
export interface BodyRoute {
  service: Service;
  kind: string;
  path: string;
  sendModel?: (model: string) => string;
  /** The base URL of the provider sendModel chose, if any, for a refusal's report. */
  baseUrl?: () => string | undefined;
}

/** What reading a body needs of the endpoint. */
export interface BodyLimits {
  maxBody: number;
  /** Rejects once the endpoint is closing. */
  closing: Promise<never>;
  closed(): boolean;
  drawBytes(count: number): string | null;
  onBlocked(event: ModelBlockedEvent): Promise<void>;
  log(line: string): void;
}

class TooLarge extends Error {}

/** Reads and checks a request's body: what to send, or the answer refusing it. */
export async function checkedBody(
  request: Request,
  route: BodyRoute,
  limits: BodyLimits,
): Promise<CheckedRequest | Response> {
  const { service, path } = route;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    // A body that never ends holds its request only until the endpoint closes.
    bytes = await Promise.race([
      readRequestBody(request, { limit: limits.maxBody, tooLarge: () => new TooLarge() }),
      limits.closing,
    ]);
  } catch (error) {
    if (error instanceof TooLarge) {
      return errorAnswer(service, { error: "too_large", message: tooLargeMessage(limits.maxBody) });
    }
    if (limits.closed()) throw error;
    // The client's request was cut short: its fault, not the model service's (nothing was sent).
    return errorAnswer(service, { error: "bad_request", message: incompleteMessage(path) });
  }
  const overTotal = limits.drawBytes(bytes.length);
  if (overTotal !== null) return errorAnswer(service, { error: "busy", message: overTotal });
  const checked = checkRequest(bytes, route);
  if (checked.kind === "ok") return checked.request;
  if (checked.blocked !== undefined) {
    const baseUrl = route.baseUrl?.();
    const event = { service, path, ...checked.blocked, ...(baseUrl ? { baseUrl } : {}) };
    await limits.onBlocked(event).catch((error) =>
      limits.log(
        `gurt model endpoint: a refusal could not be reported: ${
          error instanceof Error ? error.message : String(error)
        }`,
      )
    );
  }
  return errorAnswer(service, checked.refusal);
}

/**
 * A model request's body, checked before anything is sent: not so many JSON values that parsing
 * it would hold the core's loop, a JSON object, no background response (billed in an answer the
 * endpoint never relays), nothing the service would fetch for the task (body_check.ts); a Chat
 * Completions stream asked for its usage. What is sent is the value that was checked, written
 * again. Pure: reporting a refusal and answering it are the endpoint's.
 */
import { findRefusal, type Refusal } from "./body_check.ts";
import { mostOutput } from "./answer_usage.ts";
import type { Route } from "./routes.ts";
import {
  backgroundMessage,
  notJsonMessage,
  type ProxyError,
  refusedMessage,
  storedMessage,
  tooManyValuesMessage,
} from "./service_errors.ts";
import { moreContainersThan } from "./json_containers.ts";

/**
 * The most JSON objects and arrays one request body may hold. A long agent conversation holds tens
 * of thousands; a 20 MiB body of `{}`s took ~1.3 GB and ~13 s of the core's loop to handle.
 */
export const MOST_CONTAINERS = 200_000;

/** A body that may be sent: its bytes, its model, its choices (n), the output it asks for at most. */
export interface CheckedRequest {
  bytes: Uint8Array<ArrayBuffer>;
  model: string | null;
  choices: number;
  /** max_output_tokens, max_completion_tokens or max_tokens; null when it names none. */
  most: number | null;
}

/** What checkRequest found: a request to send, or the error to answer (and a fetch to report). */
export type RequestCheck =
  | { kind: "ok"; request: CheckedRequest }
  | {
    kind: "refused";
    refusal: { error: ProxyError; message: string; param?: string };
    /** A service-side fetch refused, for net.blocked; absent for a malformed body. */
    blocked?: Pick<Refusal, "reason" | "at">;
  };

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Checks a request body of `route` (already read, and drawn on the task's total). */
export function checkRequest(
  bytes: Uint8Array,
  route: {
    service: Route["service"];
    kind: string;
    path: string;
    /** The model to send in place of the one the body names (a provider's `<name>/` dropped). */
    sendModel?: (model: string) => string;
  },
): RequestCheck {
  const { service, kind, path, sendModel } = route;
  // Counted before the parse, which would hold the core's own loop for seconds on millions.
  if (moreContainersThan(bytes, MOST_CONTAINERS)) {
    const message = tooManyValuesMessage(MOST_CONTAINERS);
    return { kind: "refused", refusal: { error: "too_large", message } };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    parsed = undefined;
  }
  if (!isObject(parsed)) {
    return { kind: "refused", refusal: { error: "bad_request", message: notJsonMessage(path) } };
  }
  // The provider is chosen first, so that a refusal below is reported as the request to it.
  if (sendModel !== undefined && typeof parsed.model === "string") {
    parsed.model = sendModel(parsed.model);
  }
  // A background response is billed when it finishes, in an answer the endpoint never relays.
  if (
    kind === "responses" && parsed.background !== undefined && parsed.background !== null &&
    parsed.background !== false
  ) {
    return {
      kind: "refused",
      refusal: { error: "refused", message: backgroundMessage(), param: "background" },
    };
  }
  const refusal = findRefusal(parsed, service);
  if (refusal !== null) {
    return {
      kind: "refused",
      refusal: {
        error: "refused",
        message: refusal.reason === "stored_reference"
          ? storedMessage(refusal.what, refusal.at)
          : refusedMessage(refusal.what, refusal.at),
        param: refusal.at,
      },
      blocked: { reason: refusal.reason, at: refusal.at },
    };
  }
  // A Chat Completions stream reports its usage only when asked to, and every answer is metered.
  if (kind === "chat_completions" && parsed.stream === true) {
    const asked = isObject(parsed.stream_options) ? parsed.stream_options : {};
    if (asked.include_usage !== true) {
      parsed.stream_options = { ...asked, include_usage: true };
    }
  }
  // What is sent is the value that was checked, written again: a duplicate key or an odd
  // spelling that another parser could read otherwise does not reach the service.
  return {
    kind: "ok",
    request: {
      bytes: new TextEncoder().encode(JSON.stringify(parsed)),
      model: typeof parsed.model === "string" ? parsed.model : null,
      choices: Number.isSafeInteger(parsed.n) && (parsed.n as number) >= 1 ? parsed.n as number : 1,
      most: mostOutput(parsed),
    },
  };
}

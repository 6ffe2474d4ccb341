/**
 * The endpoint's own answers, each in the error format of the service the client speaks, so its
 * SDK reads the sentence as the service's error and the model sees why. Pure.
 */
import type { Service } from "./routes.ts";

/** Why the endpoint answers a request itself. */
export type ProxyError =
  | "bad_request"
  | "no_key"
  | "refused"
  | "not_found"
  | "too_large"
  | "busy"
  | "unreachable"
  | "owner_refused"
  | "owner_waiting"
  | "audit_unavailable";

/** Each error's status, and its type in each service's format. */
const SHAPES: Record<
  ProxyError,
  { status: number; anthropic: string; openai: { type: string; code: string | null } }
> = {
  bad_request: {
    status: 400,
    anthropic: "invalid_request_error",
    openai: { type: "invalid_request_error", code: null },
  },
  no_key: {
    status: 401,
    anthropic: "authentication_error",
    openai: { type: "invalid_request_error", code: "invalid_api_key" },
  },
  refused: {
    status: 403,
    anthropic: "permission_error",
    openai: { type: "invalid_request_error", code: "refused_by_box" },
  },
  not_found: {
    status: 404,
    anthropic: "not_found_error",
    openai: { type: "invalid_request_error", code: "unknown_url" },
  },
  too_large: {
    status: 413,
    anthropic: "request_too_large",
    openai: { type: "invalid_request_error", code: "request_too_large" },
  },
  busy: {
    status: 429,
    anthropic: "rate_limit_error",
    openai: { type: "requests", code: "rate_limit_exceeded" },
  },
  unreachable: {
    status: 502,
    anthropic: "api_error",
    openai: { type: "server_error", code: null },
  },
  // The owner said no (a model request over the task's budget): not worth retrying.
  owner_refused: {
    status: 403,
    anthropic: "permission_error",
    openai: { type: "invalid_request_error", code: "refused_by_owner" },
  },
  // The box cannot record what a request costs: nothing is sent until the owner mends the log.
  audit_unavailable: {
    status: 503,
    anthropic: "api_error",
    openai: { type: "server_error", code: "audit_unavailable" },
  },
  // The owner has not answered yet: a rate limit, which every SDK retries by itself.
  owner_waiting: {
    status: 429,
    anthropic: "rate_limit_error",
    openai: { type: "requests", code: "rate_limit_exceeded" },
  },
};

/** The status of an error of the endpoint's. */
export function errorStatus(error: ProxyError): number {
  return SHAPES[error].status;
}

/**
 * The body of an error in `service`'s format: Anthropic's `{"type":"error","error":{…}}`, OpenAI's
 * `{"error":{"message","type","param","code"}}` (`param` names the field at fault, when one is).
 */
export function errorBody(
  service: Service,
  detail: { error: ProxyError; message: string; param?: string },
): string {
  const error = detail.error;
  const shape = SHAPES[error];
  if (service === "anthropic") {
    return JSON.stringify({
      type: "error",
      error: { type: shape.anthropic, message: detail.message },
    });
  }
  return JSON.stringify({
    error: {
      message: detail.message,
      type: shape.openai.type,
      param: detail.param ?? null,
      code: shape.openai.code,
    },
  });
}

/** A whole error answer in `service`'s format. */
export function errorAnswer(
  service: Service,
  detail: { error: ProxyError; message: string; param?: string },
): Response {
  const error = detail.error;
  const headers: Record<string, string> = { "content-type": "application/json" };
  // A client that is told to wait retries after a second rather than at once.
  if (error === "busy" || error === "owner_waiting") headers["retry-after"] = "1";
  return new Response(errorBody(service, detail), {
    status: errorStatus(error),
    headers,
  });
}

/** The vault key each service's requests need. */
export const KEY_NAMES: Record<Service | "factory", string> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  factory: "FACTORY_API_KEY",
};

const SERVICE_NAMES: Record<Service | "factory", string> = {
  anthropic: "Anthropic",
  openai: "OpenAI",
  factory: "Factory",
};

/** The sentence for a service whose key the vault lacks, with the key's name. */
export function noKeyMessage(service: Service | "factory"): string {
  const name = KEY_NAMES[service];
  return `No model key yet. Add an Anthropic or Factory API key in Settings, Accounts & Keys, then start the task again. The box's vault has no ${name}, which requests to ${
    SERVICE_NAMES[service]
  } need (gurt vault set ${name}); see runbook.md#model-key-missing`;
}

/** The sentence for a path the endpoint does not relay. */
export function notFoundMessage(
  request: { method: string; path: string },
  relay: { service: Service; relayed: string[] },
): string {
  const { service, relayed } = relay;
  return `gurt model endpoint: ${request.method} ${request.path} is not a request the box relays to ${
    SERVICE_NAMES[service]
  }; it relays ${relayed.join(", ")}. see runbook.md#model-proxy-refused`;
}

/** The sentence for a body that is not JSON on a route that takes JSON. */
export function notJsonMessage(path: string): string {
  return `gurt model endpoint: the body of POST ${path} is not a JSON object, so the box cannot check it before it goes to the model service; send the service's own JSON. see runbook.md#model-proxy-refused`;
}

/** The sentence for a request that asks the service to reach something for the task. */
export function refusedMessage(what: string, at: string): string {
  return `gurt model endpoint: the request asks the model service to reach something for the task (${what}, at ${at}), which would go around the task's host list, so the box refused it; retrying will not help. Leave that tool out, or send the content itself (base64 or a data: URL). see runbook.md#model-proxy-refused`;
}

/** The sentence for a request that names something the service keeps (a stored prompt, say). */
export function storedMessage(what: string, at: string): string {
  return `gurt model endpoint: the request names ${what} (at ${at}), which the box cannot read before the service acts on it: it could hold tools that reach around the task's host list, or another task's conversation, so the box refused it; retrying will not help. Send the whole input with store: false instead. see runbook.md#model-proxy-refused`;
}

/** The sentence for a request whose body the client did not send to its end. */
export function incompleteMessage(path: string): string {
  return `gurt model endpoint: the request to ${path} ended before its whole body arrived (the client stopped sending, or its connection was cut), so nothing was sent to the model service; send the request again. see runbook.md#model-proxy-refused`;
}

/** The sentence for a request not sent, or an answer not given, while the audit log fails. */
export function auditDownMessage(what: "sent" | "given"): string {
  const which = what === "sent"
    ? "so the box sends no model request, whose cost it could not record"
    : "so the box could not record this answer's cost and does not give it";
  return `gurt model endpoint: the box's audit log cannot be written, ${which}; nothing is sent until gurt serve restarts with a working log. see runbook.md#audit-unavailable`;
}

/** The sentence for a Responses request in background mode, whose usage the box never sees. */
export function backgroundMessage(): string {
  return `gurt model endpoint: the request asks for a background response (background: true), which the service answers later, where the box cannot meter its usage against the task's budget, so the box refused it; send it without background (streaming is fine). see runbook.md#model-proxy-refused`;
}

/** The sentence for a body over the endpoint's limit. */
export function tooLargeMessage(limit: number): string {
  return `gurt model endpoint: the request body is larger than ${limit} bytes, the most the box's model endpoint takes in one request; send less context. see runbook.md#model-proxy-limits`;
}

/** The sentence for a body of more JSON objects and arrays than the endpoint parses. */
export function tooManyValuesMessage(most: number): string {
  return `gurt model endpoint: the request body holds more than ${most} JSON objects and arrays, the most the box's model endpoint parses in one request; a model request is mostly text, so send less structure (fewer messages or blocks). see runbook.md#model-proxy-limits`;
}

/** The sentence for a request over the endpoint's concurrent requests. */
export function busyMessage(most: number): string {
  return `gurt model endpoint: this task already has ${most} model requests under way, the most it may have at once; wait for one to end. see runbook.md#model-proxy-limits`;
}

/** The sentence for a service that cannot be reached, or whose answer cannot be relayed. */
export function unreachableMessage(baseUrl: string, why: string): string {
  return `gurt model endpoint: the model service at ${baseUrl} ${why}; see runbook.md#model-proxy-unreachable`;
}

/**
 * Which model service a request is for, and what it asks of it: the paths the model endpoint
 * relays, and no others. Pure.
 */

/** The model services a task may reach through the endpoint. */
export type Service = "anthropic" | "openai";

/** What a relayed request is, which decides its body check and how its usage is read. */
export type RouteKind =
  | "messages"
  | "count_tokens"
  | "models"
  | "responses"
  | "chat_completions";

/**
 * A request: the service it is for, and what it asks (null for a path the endpoint does not relay,
 * answered 404 in that service's error format).
 */
export interface Route {
  service: Service;
  kind: RouteKind | null;
}

/** Whether a route's request carries a JSON body, which is checked before it is relayed. */
export function hasJsonBody(kind: RouteKind): boolean {
  return kind !== "models";
}

/** The routes by method and path; `/v1/models` is both services' and told apart by headers. */
const ROUTES: { method: string; path: string; service: Service | null; kind: RouteKind }[] = [
  { method: "POST", path: "/v1/messages", service: "anthropic", kind: "messages" },
  {
    method: "POST",
    path: "/v1/messages/count_tokens",
    service: "anthropic",
    kind: "count_tokens",
  },
  { method: "POST", path: "/v1/responses", service: "openai", kind: "responses" },
  { method: "POST", path: "/v1/chat/completions", service: "openai", kind: "chat_completions" },
  { method: "GET", path: "/v1/models", service: null, kind: "models" },
];

/** The service whose client sent these headers: Anthropic's send an API version or an x-api-key. */
export function serviceOfHeaders(headers: Headers): Service {
  if (headers.has("anthropic-version") || headers.has("x-api-key")) return "anthropic";
  return "openai";
}

/** The service a path belongs to by its spelling, or null for a path both could have. */
function serviceOfPath(path: string): Service | null {
  if (path === "/v1/messages" || path.startsWith("/v1/messages/")) return "anthropic";
  if (
    path === "/v1/responses" || path.startsWith("/v1/responses/") ||
    path.startsWith("/v1/chat/")
  ) return "openai";
  return null;
}

/**
 * The route of `method` and `path` (without its query), with the headers for a shared path. With
 * `service` (a request that came to that service's own host), a path of the other service's is
 * one the endpoint does not relay.
 */
export function routeOf(
  request: { method: string; path: string; headers: Headers; service?: Service },
): Route {
  const { method, path, headers } = request;
  for (const route of ROUTES) {
    if (route.method === method && route.path === path) {
      if (request.service !== undefined && route.service !== null) {
        return {
          service: request.service,
          kind: route.service === request.service ? route.kind : null,
        };
      }
      const service = request.service ?? route.service ?? serviceOfHeaders(headers);
      return { service, kind: route.kind };
    }
  }
  return {
    service: request.service ?? serviceOfPath(path) ?? serviceOfHeaders(headers),
    kind: null,
  };
}

/** The paths the endpoint relays for `service`, for the 404's sentence. */
export function relayedPaths(service: Service): string[] {
  return ROUTES.filter((route) => route.service === null || route.service === service).map((
    route,
  ) => `${route.method} ${route.path}`);
}

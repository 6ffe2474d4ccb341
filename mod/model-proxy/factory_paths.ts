/**
 * The Factory paths a task may reach with the vault's FACTORY_API_KEY, as Droid calls them: its
 * models (in Anthropic's and OpenAI's formats, checked and metered like theirs), its settings and
 * limits, its session copy and its telemetry. Any other Factory path (a hosted connector's tool, a
 * web search or page fetch run by Factory) would reach a service outside the task's host list with
 * the owner's key, and is refused. The session copy is held to the shapes Droid sends: `POST
 * /api/sessions/create`, and `GET`, `POST`, `PUT` or `PATCH` of `/api/sessions/<id>` and the paths
 * below it, where the endpoint lets on only a session of the task's own (factorySession); the list
 * of every session (`/api/sessions`) and any `DELETE` are refused. Pure.
 */
import type { Route } from "./routes.ts";

/** Factory's model paths, each in the format of the service it stands in for. */
const MODEL_ROUTES: Readonly<Record<string, Route>> = {
  "/api/llm/a/v1/messages": { service: "anthropic", kind: "messages" },
  "/api/llm/a/v1/messages/count_tokens": { service: "anthropic", kind: "count_tokens" },
  "/api/llm/o/v1/responses": { service: "openai", kind: "responses" },
  "/api/llm/o/v1/chat/completions": { service: "openai", kind: "chat_completions" },
};

/** Settings, limits, the session copy and telemetry: relayed as they are, answers redacted. */
const PLAIN_PATHS: readonly string[] = [
  "/api/feature-flags",
  "/api/organization/managed-settings",
  "/api/internal/member-managed-settings",
  "/api/user/session-default-settings",
  "/api/billing/limits",
  "/api/cli/whoami",
  "/api/app/auth/me",
  "/api/llm/custom/usage",
  "/api/llm/failed-requests",
  "/api/ingest",
  "/api/otlp/traces/ingest",
  "/v1/metrics",
];

/** The session copy's paths: `<prefix>create`, and `<prefix><id>[/<verb>…]` (SESSION_SEGMENTS). */
const SESSION_PREFIX = "/api/sessions/";

/** The methods Droid sends to a session's own paths. */
const SESSION_METHODS: readonly string[] = ["GET", "POST", "PUT", "PATCH"];

/**
 * A path's segments below a prefix: Droid's are a session's id and verbs (`<uuid>/droid-status`).
 * Letters, digits, `-`, `_`, `.` and `~`, never first a dot: no `;` (`..;` is a parent to a
 * Tomcat-style server), no `%` escape a server could read as a dot or a slash, no empty segment.
 */
const SESSION_SEGMENTS = /^([A-Za-z0-9_~-][A-Za-z0-9._~-]*)(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*$/;

/**
 * What a Factory request is: a model request, one relayed as it is, one of the session copy's (a
 * new session, `id` null, or one session's path), or one refused.
 */
export type FactoryRoute =
  | { kind: "model"; route: Route }
  | { kind: "plain" }
  | { kind: "session"; id: string | null }
  | { kind: "refused" };

/** The route of a request to Factory's API by its path (without its query). */
export function factoryRoute(method: string, path: string): FactoryRoute {
  // A slash or dot the service would decode (or a doubled slash) could lead it to another path.
  if (/%2f|%5c|%2e|\\|\/\//i.test(path)) return refused();
  const model = Object.hasOwn(MODEL_ROUTES, path) ? MODEL_ROUTES[path] : undefined;
  if (model !== undefined) return method === "POST" ? { kind: "model", route: model } : refused();
  if (PLAIN_PATHS.includes(path)) return { kind: "plain" };
  if (path === `${SESSION_PREFIX}create`) {
    return method === "POST" ? { kind: "session", id: null } : refused();
  }
  const session = path.startsWith(SESSION_PREFIX)
    ? SESSION_SEGMENTS.exec(path.slice(SESSION_PREFIX.length))
    : null;
  if (session !== null && SESSION_METHODS.includes(method)) {
    return { kind: "session", id: session[1] };
  }
  return refused();
}

function refused(): FactoryRoute {
  return { kind: "refused" };
}

/** The id of the session a `POST /api/sessions/create` body makes, or null when it names none. */
export function createdSession(body: Uint8Array | undefined): string | null {
  if (body === undefined) return null;
  try {
    const value = JSON.parse(new TextDecoder().decode(body));
    const id = typeof value === "object" && value !== null ? value.id : undefined;
    return typeof id === "string" && SESSION_SEGMENTS.test(id) && !id.includes("/") ? id : null;
  } catch {
    return null;
  }
}

/** The sentence for a session path of a session that is not the task's. */
export function factorySessionMessage(method: string, path: string): string {
  return `gurt model endpoint: ${method} ${path} on api.factory.ai names a session this task did not make, and a task may reach only its own session's copy with the box's key (another session's could hold another task's work), so the box refused it. see runbook.md#model-proxy-refused`;
}

/** The sentence of a refused Factory path. */
export function factoryRefusedMessage(method: string, path: string): string {
  return `gurt model endpoint: ${method} ${path} on api.factory.ai is not one of the Factory paths a task may reach with the box's key (its models, settings, limits, session copy and telemetry): it could reach a service outside the task's host list, so the box refused it. see runbook.md#model-proxy-refused`;
}

/**
 * Which model service the loop speaks to, and how it reaches it: through its task's model endpoint,
 * which its environment names (ANTHROPIC_BASE_URL, OPENAI_BASE_URL and their placeholder keys) and
 * which puts the vault's key on each request in place of the placeholder. Pure.
 */

/** A model service the loop speaks to, in that service's own wire format. */
export type ModelService = "anthropic" | "openai";

/** The service of `model`: Anthropic's Messages for claude-* models, OpenAI's for any other. */
export function modelService(model: string): ModelService {
  return model.startsWith("claude-") ? "anthropic" : "openai";
}

/** One service's endpoint as the task's environment names it. */
export interface ServiceEndpoint {
  /**
   * ANTHROPIC_BASE_URL (an origin), or OPENAI_BASE_URL (an origin with /v1, as OpenAI's SDKs
   * take it), without a trailing slash.
   */
  baseUrl: string;
  /** The task's placeholder key, which the endpoint replaces with the vault's. */
  key: string;
}

/** The task's model endpoint for each service. */
export type ModelEndpoints = Record<ModelService, ServiceEndpoint>;

/** The variables each service's endpoint is read from, as any SDK inside a task reads them. */
const VARIABLES: Record<ModelService, { url: string; key: string }> = {
  anthropic: { url: "ANTHROPIC_BASE_URL", key: "ANTHROPIC_API_KEY" },
  openai: { url: "OPENAI_BASE_URL", key: "OPENAI_API_KEY" },
};

/**
 * The endpoints a task's environment names, or a sentence saying which variable is missing or is
 * not an http URL (a loop started outside a task, by hand).
 */
export function endpointsFromEnv(
  env: (name: string) => string | undefined,
): ModelEndpoints | { problem: string } {
  const found: Partial<ModelEndpoints> = {};
  for (const service of ["anthropic", "openai"] as const) {
    const names = VARIABLES[service];
    const baseUrl = env(names.url) ?? "";
    const key = env(names.key) ?? "";
    if (!/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/.test(baseUrl)) {
      return {
        problem:
          `${names.url} must name the task's model endpoint, an http URL such as http://127.0.0.1:4100, not ${
            JSON.stringify(baseUrl)
          }`,
      };
    }
    if (key === "") return { problem: `${names.key} must be set (the task's placeholder key)` };
    found[service] = { baseUrl: baseUrl.replace(/\/+$/, ""), key };
  }
  return found as ModelEndpoints;
}

/** The `host:port` of each endpoint, for the worker role's network permission. */
export function endpointHosts(endpoints: ModelEndpoints): string[] {
  const hosts = Object.values(endpoints).map((endpoint) => new URL(endpoint.baseUrl).host);
  return [...new Set(hosts)];
}

/**
 * Where the loop sends one model request for `service`, and the headers that service expects its
 * key in: Anthropic's Messages at ANTHROPIC_BASE_URL/v1/messages with x-api-key and
 * anthropic-version, OpenAI's Chat Completions at OPENAI_BASE_URL/chat/completions with a bearer
 * token.
 */
export function modelRequestTarget(
  service: ModelService,
  endpoints: ModelEndpoints,
): { url: string; headers: Record<string, string> } {
  const { baseUrl, key } = endpoints[service];
  if (service === "anthropic") {
    return {
      url: `${baseUrl}/v1/messages`,
      headers: {
        "content-type": "application/json",
        "x-api-key": key,
        "anthropic-version": "2023-06-01",
      },
    };
  }
  return {
    url: `${baseUrl}/chat/completions`,
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
  };
}

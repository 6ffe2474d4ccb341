/**
 * The owner's providers ([models.providers.<name>] in gurt.toml): which one a request's model picks,
 * the model sent to it, and the URL of its request: the provider's base URL (its path and query
 * kept) with the API's own suffix, as each API's SDKs add it: Anthropic's `/v1/messages` under a
 * base without `/v1` (as ANTHROPIC_BASE_URL), OpenAI's `/responses` and `/chat/completions` under
 * a base that has it (as OPENAI_BASE_URL). Pure.
 */
import type { RouteKind } from "./routes.ts";

/** The APIs a provider speaks. */
export type ProviderApi = "anthropic" | "openai-responses" | "openai-chat";

/** One provider as the endpoint reaches it. */
export interface ProviderTarget {
  /** Its name in gurt.toml, which a task's model may start with (`openrouter/…`). */
  name: string;
  api: ProviderApi;
  /** Its base URL, path and query included. */
  baseUrl: string;
  /** The vault key's name, for the sentence of a key the vault lacks. */
  keyName: string;
  /** The vault key's value now, null when the vault has none. */
  key(): string | null;
  /** The header the key goes in (x-api-key for Anthropic's shape, else Authorization: Bearer). */
  keyHeader?: string;
  /** Its fixed headers, with vault values written in, or the vault key it lacks for one. */
  headers(): { headers: Record<string, string> } | { missing: string };
  /** The models it serves besides `<name>/<model>`: names, or prefixes ending in `*`. */
  models: readonly string[];
  /** Its answers are charged the cost they report (`prices = "reported"`). */
  reported?: boolean;
}

/** The provider a model picks and the model sent to it, or null for a built-in service's. */
export function providerOf<T extends Pick<ProviderTarget, "name" | "models">>(
  model: string,
  providers: readonly T[],
): { provider: T; model: string } | null {
  const slash = model.indexOf("/");
  if (slash > 0) {
    const named = providers.find((provider) => provider.name === model.slice(0, slash));
    if (named !== undefined && slash < model.length - 1) {
      return { provider: named, model: model.slice(slash + 1) };
    }
  }
  for (const provider of providers) {
    const listed = provider.models.some((entry) =>
      entry.endsWith("*") ? model.startsWith(entry.slice(0, -1)) : entry === model
    );
    if (listed) return { provider, model };
  }
  return null;
}

/** The routes a provider speaking `api` is sent. */
const SERVED: Record<ProviderApi, readonly RouteKind[]> = {
  "anthropic": ["messages", "count_tokens"],
  "openai-responses": ["responses"],
  "openai-chat": ["chat_completions"],
};

/** The path each route has under a provider's base URL. */
const SUFFIX: Partial<Record<RouteKind, string>> = {
  messages: "/v1/messages",
  count_tokens: "/v1/messages/count_tokens",
  responses: "/responses",
  chat_completions: "/chat/completions",
};

/** Whether a provider speaking `api` takes a request of `kind`. */
export function providerServes(api: ProviderApi, kind: RouteKind): boolean {
  return SERVED[api].includes(kind);
}

/**
 * The URL of a `kind` request to a provider at `baseUrl`: its path with the API's suffix, its query
 * (Azure's `api-version`) first, then the request's own parameters that it does not set.
 */
export function providerUrl(baseUrl: string, kind: RouteKind, search: string): string {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${SUFFIX[kind] ?? ""}`;
  for (const [name, value] of new URLSearchParams(search)) {
    if (!url.searchParams.has(name)) url.searchParams.append(name, value);
  }
  return url.href;
}

/** The sentence of a request in one API to a provider that speaks another. */
export function providerApiMessage(provider: ProviderTarget, model: string, path: string): string {
  return `gurt model endpoint: the model ${model} is served by provider ${provider.name}, which speaks ${provider.api}, but the request came as POST ${path}, which that API does not take; the endpoint does not translate between APIs. see runbook.md#provider-refused`;
}

/** The sentence of a provider whose key (or a header's vault key) the vault lacks. */
export function providerKeyMessage(provider: ProviderTarget, what: string): string {
  return `gurt model endpoint: provider ${provider.name} needs the vault key ${what}, which the vault does not hold, so nothing was sent (gurt vault set ${what}). see runbook.md#provider-key-missing`;
}

/** What a request to a provider is sent with, or the error that refuses it unsent. */
export type ProviderSend =
  | { kind: "ok"; url: string; key: string; keyHeader?: string; fixed: Record<string, string> }
  | { kind: "refused"; error: "bad_request" | "no_key"; message: string };

/** How a `kind` request (to `path`, with `search`) for `model` is sent to `provider`. */
export function providerSend(
  provider: ProviderTarget,
  request: { kind: RouteKind; path: string; search: string; model: string },
): ProviderSend {
  if (!providerServes(provider.api, request.kind)) {
    const message = providerApiMessage(provider, request.model, request.path);
    return { kind: "refused", error: "bad_request", message };
  }
  const key = provider.key();
  if (key === null || key === "") {
    return {
      kind: "refused",
      error: "no_key",
      message: providerKeyMessage(provider, provider.keyName),
    };
  }
  const headers = provider.headers();
  if ("missing" in headers) {
    return {
      kind: "refused",
      error: "no_key",
      message: providerKeyMessage(provider, headers.missing),
    };
  }
  return {
    kind: "ok",
    url: providerUrl(provider.baseUrl, request.kind, request.search),
    key,
    keyHeader: provider.keyHeader,
    fixed: headers.headers,
  };
}

/**
 * gurt.toml's `[models.providers.<name>]`: a model service of the owner's beside the three built-in
 * ones (anthropic, openai, factory), at any http(s) URL with its path and query, speaking one of
 * the APIs the model endpoint relays, with a vault key sent in the header it reads. A task picks
 * one by its model (`<name>/<model>`, or a model the provider's `models` lists). The schema and the
 * checks across providers (no two claim one model); the vault's keys are checked by the core.
 */
import { z } from "zod";

/** The APIs a provider may speak, each relayed with its own path suffix (README.md#providers). */
export const PROVIDER_APIS = ["anthropic", "openai-responses", "openai-chat"] as const;

/** One of PROVIDER_APIS. */
export type ProviderApi = typeof PROVIDER_APIS[number];

/** The built-in services' names, which a provider of the owner's may not take. */
export const BUILT_IN_PROVIDERS: readonly string[] = ["anthropic", "openai", "factory"];

/** A vault key's name, as `gurt vault set` takes it. */
const VAULT_NAME = /^[A-Z][A-Z0-9_]{0,127}$/;

/** A header's name as HTTP writes it (a token), lowercase or not. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

/** Headers the endpoint itself writes or drops, which a provider's fixed headers may not set. */
const OWN_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "upgrade",
  "te",
  "trailer",
  "keep-alive",
  "proxy-authorization",
]);

/** A provider's base URL: http or https, with any path and query, no credentials or fragment. */
const baseUrl = z.string().superRefine((value, context) => {
  const problem = baseUrlProblem(value);
  if (problem !== null) context.addIssue({ code: "custom", message: problem });
});

/** What is wrong with a provider's base URL, or null. */
function baseUrlProblem(value: string): string | null {
  const example = "such as https://openrouter.ai/api/v1";
  if (/\s/.test(value)) return `must be an http or https URL ${example}, without spaces`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `must be an http or https URL ${example}`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `must be an http or https URL ${example}, not ${url.protocol}`;
  }
  if (url.username !== "" || url.password !== "") {
    return "must not hold a user or password: put the key in the vault and name it in key";
  }
  if (value.includes("#")) return `must not have a #fragment, ${example}`;
  return null;
}

/** A header's value: fixed text, or a vault key's value written into `format` at `{secret}`. */
const headerValue = z.union([
  z.string().max(4096).regex(/^[^\r\n\0]*$/, { message: "must be one line of text" }),
  z.strictObject({
    secret: z.string().regex(VAULT_NAME, {
      message: "must be a vault key's name such as PORTKEY_API_KEY",
    }),
    format: z.string().max(4096).regex(/^[^\r\n\0]*\{secret\}[^\r\n\0]*$/, {
      message: 'must be one line holding {secret} where the key goes, such as "Bearer {secret}"',
    }).default("{secret}"),
  }),
]);

/** One `[models.providers.<name>]`. */
export const providerSchema = z.strictObject({
  /** Where its API is: the path the API's own suffix is added to, and query kept on every request. */
  base_url: baseUrl,
  /** The API it speaks. */
  api: z.enum(PROVIDER_APIS, {
    message: `must be one of ${PROVIDER_APIS.map((api) => `"${api}"`).join(", ")}`,
  }),
  /** The vault key sent to it. */
  key: z.string().regex(VAULT_NAME, {
    message: "must be a vault key's name such as OPENROUTER_API_KEY",
  }),
  /**
   * The header the key goes in: Anthropic's shape reads x-api-key, OpenAI's `Authorization: Bearer`;
   * Azure's `api-key`. An `authorization` header is sent as `Bearer <key>`, any other as the key.
   */
  key_header: z.string().regex(HEADER_NAME, { message: "must be a header name such as api-key" })
    .refine((name) => !OWN_HEADERS.has(name.toLowerCase()), {
      message: "names a header the endpoint writes itself",
    }).optional(),
  /** Headers sent on every request to it. */
  headers: z.record(
    z.string().regex(HEADER_NAME, { message: "must be a header name such as X-Title" }).refine(
      (name) => !OWN_HEADERS.has(name.toLowerCase()),
      { message: "names a header the endpoint writes itself" },
    ),
    headerValue,
  ).default({}),
  /** The models it serves, for a task whose model does not name it: `qwen3-coder`, `llama-*`. */
  models: z.array(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,199}\*?$/, {
      message: "must be a model's name, or a prefix ending in *, such as llama-*",
    }),
  ).default([]),
  /**
   * "reported": its answers are charged the cost it reports itself (OpenRouter's `usage.cost`,
   * LiteLLM's `x-litellm-response-cost` header); an answer that reports none is priced as any.
   * Absent: priced by [models.prices], else the shipped table.
   */
  prices: z.literal("reported", {
    message: 'must be "reported" (charge the cost the provider reports), or be left out',
  }).optional(),
});

/** One provider, after defaults. */
export type ProviderConfig = z.infer<typeof providerSchema>;

/** `[models.providers]`: by name, each a lowercase name not a built-in service's. */
export const providersSchema = z.record(
  z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, {
    message: "a provider's name must be lowercase letters, digits, _ and -, such as openrouter",
  }).refine((name) => !BUILT_IN_PROVIDERS.includes(name), {
    message:
      "is a built-in service's name (anthropic, openai, factory), set by [models] <name>_base_url; name the provider otherwise",
  }),
  providerSchema,
).default({}).superRefine((providers, context) => {
  const claimed: { provider: string; model: string }[] = [];
  const names = Object.keys(providers);
  for (const [name, provider] of Object.entries(providers)) {
    for (const model of provider.models) {
      // `<provider>/<model>` names that provider first: such an entry would never be this one's.
      const first = model.split("/")[0];
      if (model.includes("/") && names.includes(first)) {
        context.addIssue({
          code: "custom",
          path: [name, "models"],
          message: `${
            JSON.stringify(model)
          } begins with provider ${first}'s name, so a task's model of that name goes to ${first}; list it without the prefix`,
        });
        return;
      }
      const other = claimed.find((seen) => seen.provider !== name && overlap(seen.model, model));
      if (other !== undefined) {
        context.addIssue({
          code: "custom",
          path: [name, "models"],
          message: `${JSON.stringify(model)} is claimed by provider ${other.provider} too (${
            JSON.stringify(other.model)
          }): a model may be served by one provider; name it as <provider>/<model> instead`,
        });
        return;
      }
      claimed.push({ provider: name, model });
    }
  }
});

/** Whether two `models` entries (each a name, or a prefix ending in `*`) can match one model. */
function overlap(a: string, b: string): boolean {
  const prefixA = a.endsWith("*") ? a.slice(0, -1) : null;
  const prefixB = b.endsWith("*") ? b.slice(0, -1) : null;
  if (prefixA !== null && prefixB !== null) {
    return prefixA.startsWith(prefixB) || prefixB.startsWith(prefixA);
  }
  if (prefixA !== null) return b.startsWith(prefixA);
  if (prefixB !== null) return a.startsWith(prefixB);
  return a === b;
}

/** Whether a `models` entry matches `model`. */
export function modelMatches(entry: string, model: string): boolean {
  return entry.endsWith("*") ? model.startsWith(entry.slice(0, -1)) : entry === model;
}

/**
 * The vault keys the providers need (their `key`, their headers' `secret`s), each with the dotted
 * field that names it, for the core to check at its start.
 */
export function providerKeys(
  providers: Record<string, ProviderConfig>,
): { field: string; name: string }[] {
  const found: { field: string; name: string }[] = [];
  for (const [provider, config] of Object.entries(providers)) {
    found.push({ field: `models.providers.${provider}.key`, name: config.key });
    for (const value of Object.values(config.headers)) {
      if (typeof value !== "string") {
        found.push({ field: `models.providers.${provider}.headers`, name: value.secret });
      }
    }
  }
  return found;
}

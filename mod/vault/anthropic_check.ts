/**
 * A new ANTHROPIC_API_KEY is tried first with a free call: GET {base}/v1/models with the key in
 * x-api-key (Anthropic's List Models endpoint costs nothing). A key the API refuses is not saved.
 */

/** The key that is checked against Anthropic before it is saved. */
export const ANTHROPIC_KEY_NAME = "ANTHROPIC_API_KEY";

/** What the check came to: usable, refused by Anthropic, or not checked (Anthropic not reached). */
export type KeyCheck =
  | { kind: "accepted" }
  | { kind: "refused"; message: string }
  | { kind: "unchecked"; message: string };

/** Where and how long to check. */
export interface KeyCheckOptions {
  baseUrl: string;
  timeoutMs: number;
}

/** Tries `key` against Anthropic's free List Models call. The messages never hold the key. */
export async function checkAnthropicKey(key: string, options: KeyCheckOptions): Promise<KeyCheck> {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/v1/models?limit=1`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "GET",
      headers: { "x-api-key": key, "anthropic-version": "2023-06-01" },
      signal: AbortSignal.timeout(options.timeoutMs),
      redirect: "error",
    });
  } catch (error) {
    return {
      kind: "unchecked",
      message: `${ANTHROPIC_KEY_NAME} was not saved: gurt could not reach Anthropic at ` +
        `${options.baseUrl} ([vault] anthropic_base_url) to try it ` +
        `(${unreachedWhy(error, options.timeoutMs)}); check the box's network and set it ` +
        `again; see runbook.md#vault-key-refused`,
    };
  }
  const body = await response.text().catch(() => "");
  if (response.ok) return { kind: "accepted" };
  const detail = errorDetail(body);
  if (response.status === 401 || response.status === 403) {
    return {
      kind: "refused",
      message: `Anthropic refused this ${ANTHROPIC_KEY_NAME} (${response.status}${detail}), so ` +
        `it was not saved; copy the key again from the Anthropic console and set it again; ` +
        `see runbook.md#vault-key-refused`,
    };
  }
  // A 429 or 5xx passes; any other status says the base URL is not Anthropic's API.
  const passing = response.status === 429 || response.status >= 500;
  return {
    kind: "unchecked",
    message: `${ANTHROPIC_KEY_NAME} was not saved: Anthropic at ${options.baseUrl} ` +
      `([vault] anthropic_base_url) answered ${response.status}${detail} when gurt tried it; ` +
      (passing
        ? "set it again in a minute"
        : "check that setting names Anthropic's API, or a service that answers its GET /v1/models") +
      "; see runbook.md#vault-key-refused",
  };
}

/** Why the check's request got no answer, in a few words: the timeout, or the fetch's own reason. */
function unreachedWhy(error: unknown, timeoutMs: number): string {
  if (!(error instanceof Error)) return "an error";
  if (error.name === "TimeoutError") return `no answer within ${timeoutMs} ms`;
  // Deno's fetch says "fetch failed" and puts the reason (DNS, refused, TLS) in its cause.
  const cause = error.cause instanceof Error ? error.cause.message : "";
  const message = (cause !== "" ? cause : error.message)
    .replace(/^error sending request for url \([^)]*\): /, "")
    .replace(/\s+/g, " ")
    .trim();
  if (message === "") return error.name;
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

/** `: <type>` from Anthropic's error body `{"type":"error","error":{"type":…,"message":…}}`. */
function errorDetail(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: { type?: unknown } };
    const type = parsed.error?.type;
    if (typeof type === "string" && /^[a-z_]{1,64}$/.test(type)) return ` ${type}`;
  } catch {
    // Not Anthropic's error shape: the status says enough.
  }
  return "";
}

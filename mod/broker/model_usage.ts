/** Token counts from a model service's answer, in either wire format, whole or streamed (SSE). */
import { sseData } from "../net/mod.ts";
import type { TokenCounts } from "./pricing.ts";

type Kind = "anthropic" | "openai";
type Fields = Record<string, unknown>;

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}

function anthropicUsage(usage: Fields): TokenCounts {
  return {
    input: count(usage.input_tokens),
    output: count(usage.output_tokens),
    cacheWrite: count(usage.cache_creation_input_tokens),
    cacheRead: count(usage.cache_read_input_tokens),
  };
}

function openaiUsage(usage: Fields): TokenCounts {
  const details = (usage.prompt_tokens_details ?? {}) as Fields;
  const cached = count(details.cached_tokens);
  return {
    input: Math.max(0, count(usage.prompt_tokens) - cached),
    output: count(usage.completion_tokens),
    cacheRead: cached,
  };
}

/** The usage of a whole (not streamed) answer, or null when it holds none. */
export function usageOfAnswer(kind: Kind, text: string): TokenCounts | null {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return null;
  }
  const usage = (answer as Fields | null)?.usage;
  if (typeof usage !== "object" || usage === null) return null;
  return kind === "anthropic" ? anthropicUsage(usage as Fields) : openaiUsage(usage as Fields);
}

/** The usage a streamed answer (server-sent events) reported, or null if it reported none. */
export async function usageOfStream(
  kind: Kind,
  body: ReadableStream<Uint8Array>,
): Promise<TokenCounts | null> {
  let tokens: TokenCounts | null = null;
  for await (const data of sseData(body)) {
    let event: Fields;
    try {
      event = JSON.parse(data);
    } catch {
      continue; // "[DONE]" and anything else that is not an event
    }
    if (kind === "openai") {
      if (typeof event.usage === "object" && event.usage !== null) {
        tokens = openaiUsage(event.usage as Fields);
      }
    } else if (event.type === "message_start") {
      tokens = anthropicUsage(((event.message as Fields | undefined)?.usage ?? {}) as Fields);
    } else if (event.type === "message_delta" && typeof event.usage === "object") {
      const usage = event.usage as Fields;
      tokens = { ...(tokens ?? { input: 0, output: 0 }), output: count(usage.output_tokens) };
      if (usage.input_tokens !== undefined) tokens.input = count(usage.input_tokens);
    }
  }
  return tokens;
}

/** Token counts from a model service's answer, in either wire format, whole or streamed (SSE). */
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

/** Reads the usage out of a streamed answer as its bytes pass by. */
export class UsageReader {
  #buffer = "";
  #decoder = new TextDecoder();
  #tokens: TokenCounts | null = null;

  constructor(readonly kind: Kind) {}

  /** Takes the next bytes of the stream. */
  push(chunk: Uint8Array): void {
    this.#buffer += this.#decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = this.#buffer.indexOf("\n")) !== -1) {
      const line = this.#buffer.slice(0, end).replace(/\r$/, "");
      this.#buffer = this.#buffer.slice(end + 1);
      if (line.startsWith("data:")) this.#data(line.slice(5).trim());
    }
  }

  /** The tokens the stream reported, or null if it reported none. */
  tokens(): TokenCounts | null {
    return this.#tokens;
  }

  #data(data: string): void {
    let event: Fields;
    try {
      event = JSON.parse(data);
    } catch {
      return; // "[DONE]" and anything else that is not an event
    }
    if (this.kind === "openai") {
      if (typeof event.usage === "object" && event.usage !== null) {
        this.#tokens = openaiUsage(event.usage as Fields);
      }
      return;
    }
    if (event.type === "message_start") {
      const usage = ((event.message as Fields | undefined)?.usage ?? {}) as Fields;
      this.#tokens = anthropicUsage(usage);
    } else if (event.type === "message_delta" && typeof event.usage === "object") {
      const usage = event.usage as Fields;
      const before = this.#tokens ?? { input: 0, output: 0 };
      this.#tokens = { ...before, output: count(usage.output_tokens) };
      if (usage.input_tokens !== undefined) this.#tokens.input = count(usage.input_tokens);
    }
  }
}

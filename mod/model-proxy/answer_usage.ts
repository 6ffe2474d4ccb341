/**
 * The tokens a model answer used, as the service reports them: in a whole answer's `usage`, or in
 * the events of a streamed one (Anthropic's `message_start` and `message_delta`, the Responses API's
 * `response.completed`, a Chat Completions stream's usage chunk). The stream is read as it passes,
 * line by line; only an event whose data names a `"usage"` key is parsed, since inside a JSON
 * string that word's quotes would be escaped. Pure.
 */
import type { RouteKind } from "./routes.ts";

/** Token counts, as /usage and the price table take them. */
export interface TokenCounts {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

/** What an answer reported: its tokens and the model that answered, each when it said. */
export interface AnswerUsage {
  tokens: TokenCounts | null;
  model: string | null;
}

type Fields = Record<string, unknown>;

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}

/** Anthropic's usage; a field it leaves out keeps what `before` had (a delta names only some). */
function anthropicTokens(usage: Fields, before: TokenCounts | null): TokenCounts {
  const base = before ?? { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
  const pick = (key: string, old: number) => usage[key] === undefined ? old : count(usage[key]);
  return {
    input: pick("input_tokens", base.input),
    output: pick("output_tokens", base.output),
    cacheWrite: pick("cache_creation_input_tokens", base.cacheWrite),
    cacheRead: pick("cache_read_input_tokens", base.cacheRead),
  };
}

/** OpenAI's usage, either API's: the cached part of the input is counted apart from the rest. */
function openaiTokens(usage: Fields): TokenCounts {
  const chat = usage.prompt_tokens !== undefined;
  const details = usage[chat ? "prompt_tokens_details" : "input_tokens_details"];
  const cached = isObject(details) ? count(details.cached_tokens) : 0;
  const input = count(chat ? usage.prompt_tokens : usage.input_tokens);
  return {
    input: Math.max(0, input - cached),
    output: count(chat ? usage.completion_tokens : usage.output_tokens),
    cacheWrite: 0,
    cacheRead: cached,
  };
}

function modelOf(value: unknown): string | null {
  return isObject(value) && typeof value.model === "string" ? value.model : null;
}

/** Whether a route's answers carry usage to meter. */
export function metered(kind: RouteKind): boolean {
  return kind === "messages" || kind === "responses" || kind === "chat_completions";
}

/** The usage of a whole answer's text; nothing when it is not JSON or holds none. */
export function wholeAnswerUsage(kind: RouteKind, text: string): AnswerUsage {
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return { tokens: null, model: null };
  }
  if (!isObject(answer) || !isObject(answer.usage)) return { tokens: null, model: null };
  const tokens = kind === "messages"
    ? anthropicTokens(answer.usage, null)
    : openaiTokens(answer.usage);
  return { tokens, model: modelOf(answer) };
}

/** Reads a streamed answer's usage as its bytes pass; `usage` is what it has seen so far. */
export class StreamUsage {
  readonly #kind: RouteKind;
  readonly #decoder = new TextDecoder();
  /** The start of a line not yet ended. */
  #rest = "";
  /** The data lines of the event not yet ended, and whether one names a usage key. */
  #data: string[] = [];
  #named = false;
  #tokens: TokenCounts | null = null;
  #model: string | null = null;

  constructor(kind: RouteKind) {
    this.#kind = kind;
  }

  /** What the answer has reported so far. */
  get usage(): AnswerUsage {
    return { tokens: this.#tokens, model: this.#model };
  }

  /** Takes the next bytes of the answer. */
  push(bytes: Uint8Array): void {
    this.#lines(this.#decoder.decode(bytes, { stream: true }));
  }

  /** The answer has ended: a last event without its blank line counts too. */
  end(): void {
    this.#lines(this.#decoder.decode());
    if (this.#rest !== "") this.#line(this.#rest);
    this.#rest = "";
    this.#line("");
  }

  #lines(text: string): void {
    let start = 0;
    let end = text.indexOf("\n");
    if (end === -1) {
      this.#rest += text;
      return;
    }
    this.#line(this.#rest + text.slice(0, end));
    this.#rest = "";
    start = end + 1;
    while ((end = text.indexOf("\n", start)) !== -1) {
      this.#line(text.slice(start, end));
      start = end + 1;
    }
    this.#rest = text.slice(start);
  }

  #line(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line === "") {
      if (this.#named) this.#event(this.#data.join("\n"));
      this.#data = [];
      this.#named = false;
      return;
    }
    if (!line.startsWith("data:")) return;
    const data = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    this.#data.push(data);
    if (data.includes('"usage"')) this.#named = true;
  }

  #event(data: string): void {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(event)) return;
    if (this.#kind === "messages") {
      if (event.type === "message_start" && isObject(event.message)) {
        this.#model = modelOf(event.message) ?? this.#model;
        if (isObject(event.message.usage)) {
          this.#tokens = anthropicTokens(event.message.usage, null);
        }
      } else if (event.type === "message_delta" && isObject(event.usage)) {
        this.#tokens = anthropicTokens(event.usage, this.#tokens);
      }
    } else if (this.#kind === "responses") {
      if (isObject(event.response) && isObject(event.response.usage)) {
        this.#tokens = openaiTokens(event.response.usage);
        this.#model = modelOf(event.response) ?? this.#model;
      }
    } else if (isObject(event.usage)) {
      this.#tokens = openaiTokens(event.usage);
      this.#model = modelOf(event) ?? this.#model;
    }
  }
}

/**
 * The tokens a model answer used, as the service reports them: in a whole answer's `usage`, or in
 * the events of a streamed one (Anthropic's `message_start` and `message_delta`, the Responses API's
 * `response.completed`, a Chat Completions stream's usage chunk). The stream is read as it passes,
 * line by line; only an event whose data names a `"usage"` key is parsed, since inside a JSON
 * string that word's quotes would be escaped. Pure.
 */
import { reportedNanocents, type TokenCounts } from "./prices.ts";
import type { RouteKind } from "./routes.ts";

/** What an answer reported: its tokens and the model that answered, each when it said. */
export interface AnswerUsage {
  tokens: TokenCounts | null;
  model: string | null;
  /**
   * The cost the answer reported itself (OpenRouter's `usage.cost`), billionths of a cent; absent
   * when it reported none.
   */
  reported?: number | null;
}

type Fields = Record<string, unknown>;

/** What an event that carries usage has in its data, and no JSON string can hold unescaped. */
const USAGE = '"usage"';

/**
 * What the held text is searched for: USAGE without its first quote, found far faster (a `u` is
 * rarer than a quote in JSON), and in every text that holds USAGE.
 */
const USAGE_TAIL = 'usage"';

/**
 * Where the last event in `text` ends (after its blank line: LF LF, or CRLF CRLF), searching from
 * `from`; -1 when none has.
 */
function lastEventEnd(text: string, from: number): number {
  // Searched forwards first, so a long event not yet ended is not searched again at each push.
  const lf = text.indexOf("\n\n", from) === -1 ? -1 : text.lastIndexOf("\n\n") + 2;
  const crlf = text.indexOf("\n\r\n", from) === -1 ? -1 : text.lastIndexOf("\n\r\n") + 3;
  return Math.max(lf, crlf);
}

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
  const reported = reportedNanocents(answer.usage.cost);
  return { tokens, model: modelOf(answer), ...(reported === null ? {} : { reported }) };
}

/**
 * Reads a streamed answer's usage as its bytes pass; `usage` is what it has seen so far. Text is
 * held from the start of the event not yet ended; while what is held names no `"usage"`, nothing
 * in it can matter, and at each event's end it is dropped without being read line by line.
 */
export class StreamUsage {
  readonly #kind: RouteKind;
  readonly #decoder = new TextDecoder();
  /** The text from the start of the first event not yet ended. */
  #held = "";
  /** Whether the held text names a usage key. */
  #named = false;
  /** The data lines of the event being read line by line. */
  #data: string[] = [];
  #eventNamed = false;
  #tokens: TokenCounts | null = null;
  #model: string | null = null;
  #reported: number | null = null;
  #final = false;

  constructor(kind: RouteKind) {
    this.#kind = kind;
  }

  /** What the answer has reported so far. */
  get usage(): AnswerUsage {
    const reported = this.#reported;
    return { tokens: this.#tokens, model: this.#model, ...(reported === null ? {} : { reported }) };
  }

  /**
   * Whether the usage said so far is the answer's whole: its last usage (Anthropic's
   * message_delta, a Responses usage, a Chat usage chunk) was read, not only message_start's.
   */
  get final(): boolean {
    return this.#final;
  }

  /** Takes the next bytes of the answer. */
  push(bytes: Uint8Array): void {
    const added = this.#decoder.decode(bytes, { stream: true });
    if (added === "") return;
    // Only the new text is searched, with enough of the old before it to find what straddles.
    const from = Math.max(0, this.#held.length - USAGE_TAIL.length + 1);
    const blankFrom = Math.max(0, this.#held.length - 2);
    this.#held += added;
    if (!this.#named) this.#named = this.#held.includes(USAGE_TAIL, from);
    const end = lastEventEnd(this.#held, blankFrom);
    if (end === -1) return;
    if (this.#named) {
      this.#read(this.#held.slice(0, end));
      this.#held = this.#held.slice(end);
      this.#named = this.#held.includes(USAGE_TAIL);
    } else {
      this.#held = this.#held.slice(end);
    }
  }

  /** The answer has ended: a last event without its blank line counts too. */
  end(): void {
    this.#held += this.#decoder.decode();
    if (this.#held.includes(USAGE_TAIL)) this.#read(`${this.#held}\n\n`);
    this.#held = "";
    this.#named = false;
  }

  /** Reads whole events line by line; `text` ends with a blank line. */
  #read(text: string): void {
    let start = 0;
    let end: number;
    while ((end = text.indexOf("\n", start)) !== -1) {
      this.#line(text.slice(start, end));
      start = end + 1;
    }
  }

  #line(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line === "") {
      if (this.#eventNamed) this.#event(this.#data.join("\n"));
      this.#data = [];
      this.#eventNamed = false;
      return;
    }
    if (!line.startsWith("data:")) return;
    const data = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    this.#data.push(data);
    if (data.includes(USAGE)) this.#eventNamed = true;
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
        this.#reported = reportedNanocents(event.usage.cost) ?? this.#reported;
        this.#final = true;
      }
    } else if (this.#kind === "responses") {
      if (isObject(event.response) && isObject(event.response.usage)) {
        this.#tokens = openaiTokens(event.response.usage);
        this.#model = modelOf(event.response) ?? this.#model;
        this.#reported = reportedNanocents(event.response.usage.cost) ?? this.#reported;
        this.#final = true;
      }
    } else if (isObject(event.usage)) {
      this.#tokens = openaiTokens(event.usage);
      this.#model = modelOf(event) ?? this.#model;
      this.#reported = reportedNanocents(event.usage.cost) ?? this.#reported;
      // The last usage chunk has no choices; a server that sends usage with every chunk (vLLM's
      // continuous usage stats) has not said its whole usage until then.
      const choices = event.choices;
      this.#final = choices === undefined || (Array.isArray(choices) && choices.length === 0);
    }
  }
}

/** The output a request that names no limit is charged at most when its stream is cut short. */
export const DEFAULT_MOST_OUTPUT = 32_000;

/** The most output tokens a request asks for: max_tokens, max_completion_tokens, max_output_tokens. */
export function mostOutput(body: Record<string, unknown>): number | null {
  for (const key of ["max_output_tokens", "max_completion_tokens", "max_tokens"]) {
    const value = body[key];
    if (typeof value === "number" && Number.isSafeInteger(value) && value > 0) return value;
  }
  return null;
}

/**
 * The usage to charge for a stream cut before its end: what it reported, but at least the input
 * its request could hold (half its bytes, each token at least two bytes of JSON on average) and
 * all the output it asked for.
 */
export function cutShort(
  seen: AnswerUsage,
  limits: { bodyBytes: number; most: number },
): AnswerUsage {
  const tokens = seen.tokens ?? { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 };
  const knownInput = tokens.input + tokens.cacheWrite + tokens.cacheRead > 0;
  return {
    model: seen.model,
    tokens: {
      ...tokens,
      input: knownInput ? tokens.input : Math.ceil(limits.bodyBytes / 2),
      output: Math.max(tokens.output, limits.most),
    },
  };
}

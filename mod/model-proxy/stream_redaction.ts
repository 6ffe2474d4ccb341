/**
 * Redaction of a model answer as a worker will read it, not as its bytes happen to fall. A streamed
 * answer is server-sent events: a vault value the service spreads over two events, or spells with
 * JSON escapes, is in no run of its bytes, yet a worker that joins the deltas gets it whole. So the
 * relay reads each event, redacts the decoded texts a worker joins as continuous streams (see
 * messages_stream.ts, chat_stream.ts, responses_stream.ts), and writes the event again: the same events in the same order, each passed on
 * once every piece of text it carries is decided (held back only while it could still be the start
 * of a vault value), byte for byte when nothing in it changed.
 *
 * What the endpoint cannot read as the format it expects it does not pass on. Redacting the raw bytes
 * of an event it cannot parse would not do: the bytes need not spell the value for a worker's
 * parser to decode it. So a streamed answer is cut off at the first such event: what is held back
 * is dropped, an error event in the format's own shape ends the answer, and the core says why in
 * its log. A whole (not streamed) answer that is not JSON is refused in the same way.
 */
import type { AnswerFormat, Draft } from "./event_draft.ts";
import { AnthropicAnswer } from "./messages_stream.ts";
import { OpenAIAnswer } from "./chat_stream.ts";
import { ResponsesAnswer } from "./responses_stream.ts";
import { AnswerUnreadable } from "./json_text_stream.ts";
import type { TextRedaction } from "../vault/mod.ts";

export { AnswerUnreadable } from "./json_text_stream.ts";

/** The most of an answer held at once: an event not yet complete, and events waiting to go. */
const MOST_HELD = 8 * 1024 * 1024;

/** The sentence a worker gets when the endpoint cuts its answer off, or refuses it. */
export function unreadableMessage(what: string, reason: string): string {
  return `gurt stopped passing on the model service's answer: it could not read it as ${what} (${reason}), so it could not check it for vault values; see runbook.md#model-answer-unreadable`;
}

/** One event read from the stream. */
interface SseEvent {
  name: string | null;
  data: string;
}

/**
 * Server-sent events, read as they arrive. Comments, `id:`, `retry:` and unknown fields are dropped:
 * neither wire format uses them, and a worker needs none of them to read the answer. Each text is
 * searched for line ends once: the part of a line not yet ended is kept as the texts it came in and
 * joined only when its end arrives, so a long line costs time in proportion to its length.
 */
class SseReader {
  /** The texts of the line not yet ended, and their length. */
  #line: string[] = [];
  #lineLength = 0;
  /** The last text ended in a CR: a LF that starts the next one is the rest of a CRLF. */
  #afterCr = false;
  #name: string | null = null;
  #data: string[] | null = null;
  #size = 0;

  /** How much is held: the part of a line not yet ended and the event not yet complete. */
  get held(): number {
    return this.#lineLength + this.#size;
  }

  /** Takes more text; returns the events now complete. */
  push(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    if (this.#afterCr && text !== "") {
      this.#afterCr = false;
      if (text[0] === "\n") start = 1;
    }
    const ends = /[\r\n]/g;
    while (true) {
      ends.lastIndex = start;
      const found = ends.exec(text);
      if (found === null) break;
      const at = found.index;
      this.#line.push(text.slice(start, at));
      this.#endLine(events);
      start = at + 1;
      if (text[at] === "\r") {
        if (at + 1 === text.length) this.#afterCr = true;
        else if (text[at + 1] === "\n") start++;
      }
    }
    if (start < text.length) {
      this.#line.push(text.slice(start));
      this.#lineLength += text.length - start;
    }
    return events;
  }

  /** The stream has ended: a last line without its end, and an event without its blank line. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.#lineLength > 0) this.#endLine(events);
    this.#line = [];
    this.#lineLength = 0;
    this.#read("", events);
    return events;
  }

  #endLine(events: SseEvent[]): void {
    const line = this.#line.length === 1 ? this.#line[0] : this.#line.join("");
    this.#line = [];
    this.#lineLength = 0;
    this.#read(line, events);
  }

  #read(line: string, events: SseEvent[]): void {
    if (line === "") {
      const data = this.#data?.join("\n") ?? "";
      if (data !== "") events.push({ name: this.#name, data });
      this.#name = null;
      this.#data = null;
      this.#size = 0;
      return;
    }
    const colon = line.indexOf(":");
    if (colon === 0) return; // a comment
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.#name = value;
    if (field === "data") (this.#data ??= []).push(value);
    this.#size += line.length;
  }
}

/** A streamed answer's events, redacted; `push` and `end` return the text now safe to send. */
export class EventRedactor {
  readonly #format: AnswerFormat;
  readonly #redaction: TextRedaction;
  readonly #reader = new SseReader();
  readonly #queue: { name: string | null; draft: Draft }[] = [];
  #queued = 0;
  #out = "";

  constructor(format: AnswerFormat, redaction: TextRedaction) {
    this.#format = format;
    this.#redaction = redaction;
  }

  /**
   * Takes the next text of the answer; returns what is now safe to send. Throws AnswerUnreadable
   * where it cannot be read, after which `sendable` still gives what came before that point.
   */
  push(text: string): string {
    for (const event of this.#reader.push(text)) this.#read(event);
    if (this.#reader.held + this.#queued > MOST_HELD) {
      throw new AnswerUnreadable(
        `more than ${MOST_HELD / 1024 / 1024} MiB of it would have to be held back`,
      );
    }
    return this.sendable();
  }

  /** The answer has ended: the rest, every text decided. */
  end(): string {
    for (const event of this.#reader.end()) this.#read(event);
    this.#format.end();
    this.#drain();
    return this.sendable();
  }

  /** What is ready to send and has not been taken yet. */
  sendable(): string {
    const out = this.#out;
    this.#out = "";
    return out;
  }

  /** The event that ends a cut answer, in the format's shape. */
  cutEvent(reason: string): string {
    return this.#format.cutEvent(unreadableMessage(this.#format.name, reason));
  }

  #read(event: SseEvent): void {
    if (event.name !== null && this.#redaction.redact(event.name) !== event.name) {
      throw new AnswerUnreadable("an event's name holds a vault value");
    }
    this.#queue.push({ name: event.name, draft: this.#format.read(event.data) });
    this.#queued += event.data.length;
    this.#drain();
  }

  #drain(): void {
    while (this.#queue.length > 0 && this.#queue[0].draft.ready) {
      const { name, draft } = this.#queue.shift()!;
      this.#queued -= draft.original.length;
      const data = draft.data();
      // The last check: a value in what no stream reads (a number, say) cannot be replaced there.
      if (this.#redaction.redact(data) !== data) {
        throw new AnswerUnreadable("an event holds a vault value where it cannot be replaced");
      }
      if (name !== null) this.#out += `event: ${name}\n`;
      for (const line of data.split("\n")) this.#out += `data: ${line}\n`;
      this.#out += "\n";
    }
  }
}

/** What reading a streamed answer needs besides the vault's redaction. */
export interface AnswerOptions {
  /** Anthropic Messages, OpenAI Chat Completions, or OpenAI Responses events. */
  kind: "anthropic" | "openai" | "responses";
  /** How many choices an OpenAI request asked for (its `n`). */
  choices: number;
  /** Called once, with the reason (never the answer's text), when the answer is cut off. */
  cut(reason: string): void;
}

/** A TransformStream that redacts a streamed answer's events, and cuts it off where it must. */
export function redactingAnswerStream(
  redaction: TextRedaction,
  options: AnswerOptions,
): TransformStream<Uint8Array, Uint8Array> {
  const format = options.kind === "anthropic"
    ? new AnthropicAnswer(redaction)
    : options.kind === "responses"
    ? new ResponsesAnswer(redaction)
    : new OpenAIAnswer(redaction, options.choices);
  const events = new EventRedactor(format, redaction);
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let cut = false;
  const step = (
    controller: TransformStreamDefaultController<Uint8Array>,
    next: () => string,
  ) => {
    if (cut) return;
    try {
      const out = next();
      if (out !== "") controller.enqueue(encoder.encode(out));
    } catch (error) {
      if (!(error instanceof AnswerUnreadable)) throw error;
      cut = true;
      options.cut(error.message);
      // The events before the one that could not be read go; what is held back does not.
      controller.enqueue(encoder.encode(events.sendable() + events.cutEvent(error.message)));
      controller.terminate();
    }
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      step(controller, () => events.push(decoder.decode(chunk, { stream: true })));
    },
    flush(controller) {
      step(controller, () => events.push(decoder.decode()) + events.end());
    },
  });
}

/**
 * OpenAI chat completions, streamed, read event by event for redaction: per choice, `content`,
 * `refusal`, `reasoning_content` and `reasoning`; per tool call, its `function.name` and its
 * `function.arguments`, read as JSON and as plain text. Every other string is redacted whole. Two
 * entries for one choice in a chunk, a choice the request did not ask for, or text after a choice
 * has finished is refused, since a worker could join its text in a way the endpoint did not read it.
 */
import { AnswerUnreadable } from "./json_text_stream.ts";
import {
  type AnswerFormat,
  Draft,
  type Fields,
  isIndex,
  isObject,
  parseObject,
} from "./event_draft.ts";
import { PieceStream } from "./piece_stream.ts";
import type { TextRedaction } from "../vault/mod.ts";
import { ToolInputStream } from "./tool_input_stream.ts";

/** The fields of an OpenAI delta that a worker joins across chunks, as text. */
const OPENAI_TEXTS = ["content", "refusal", "reasoning_content", "reasoning"];

/**
 * The most choices and tool calls one OpenAI answer may open, all choices together: each keeps
 * its streams until the answer ends, so without a bound an answer could keep more of the core
 * than all the text it sends.
 */
export const MOST_PARTS = 1024;

/** The streams of one OpenAI tool call: its name and its arguments. */
interface ToolCallStreams {
  name: PieceStream;
  arguments: ToolInputStream;
}

/** The streams of one OpenAI choice. */
class Choice {
  finished = false;
  readonly texts = new Map<string, PieceStream>();
  readonly calls = new Map<number, ToolCallStreams>();

  constructor(readonly redaction: TextRedaction, readonly opened: () => void) {}

  text(name: string): PieceStream {
    let stream = this.texts.get(name);
    if (stream === undefined) this.texts.set(name, stream = new PieceStream(this.redaction));
    return stream;
  }

  call(index: number): ToolCallStreams {
    let call = this.calls.get(index);
    if (call === undefined) {
      this.opened();
      call = {
        name: new PieceStream(this.redaction),
        arguments: new ToolInputStream(this.redaction),
      };
      this.calls.set(index, call);
    }
    return call;
  }

  end(): void {
    for (const stream of this.texts.values()) stream.end();
    for (const call of this.calls.values()) {
      call.name.end();
      call.arguments.end();
    }
  }
}

/**
 * OpenAI's chat completions, streamed: each chunk has at most one entry per choice (a worker that
 * reads `choices[0]` would read only the first of two), for a choice the request asked for, and no
 * text after that choice's finish_reason.
 */
export class OpenAIAnswer implements AnswerFormat {
  readonly name = "OpenAI chat completion chunks";
  readonly #redaction: TextRedaction;
  readonly #choices = new Map<number, Choice>();
  /** How many choices the request asked for (its `n`). */
  readonly #asked: number;
  /** How many choices and tool calls the answer has opened. */
  #parts = 0;
  #done = false;

  constructor(redaction: TextRedaction, asked: number) {
    this.#redaction = redaction;
    this.#asked = asked;
  }

  read(data: string): Draft {
    if (this.#done) throw new AnswerUnreadable("an event after [DONE]");
    if (data.trim() === "[DONE]") {
      this.end();
      this.#done = true;
      return new Draft(data, null);
    }
    const chunk = parseObject(data);
    const draft = new Draft(data, chunk);
    const choices = chunk.choices ?? [];
    if (!Array.isArray(choices)) throw new AnswerUnreadable("a chunk whose choices are no list");
    const seen = new Set<number>();
    for (const choice of choices) {
      if (!isObject(choice)) throw new AnswerUnreadable("a choice that is not an object");
      if (!isIndex(choice.index) || choice.index >= this.#asked) {
        throw new AnswerUnreadable(
          `a choice the request did not ask for (it asked for ${this.#asked})`,
        );
      }
      if (seen.has(choice.index)) {
        throw new AnswerUnreadable(`a chunk with two entries for choice ${choice.index}`);
      }
      seen.add(choice.index);
      let state = this.#choices.get(choice.index);
      if (state === undefined) {
        this.#opened();
        state = new Choice(this.#redaction, () => this.#opened());
        this.#choices.set(choice.index, state);
      }
      const delta = choice.delta ?? {};
      if (!isObject(delta)) throw new AnswerUnreadable("a choice whose delta is not an object");
      this.#readDelta(draft, state, delta);
      if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
        state.end();
        state.finished = true;
      }
    }
    draft.redactRest(this.#redaction);
    return draft;
  }

  #opened(): void {
    if (++this.#parts > MOST_PARTS) {
      throw new AnswerUnreadable(`more than ${MOST_PARTS} choices and tool calls in one answer`);
    }
  }

  #readDelta(draft: Draft, choice: Choice, delta: Fields): void {
    const late = (value: unknown) => {
      if (choice.finished && value !== "") {
        throw new AnswerUnreadable("text for a choice after its finish_reason");
      }
    };
    for (const name of OPENAI_TEXTS) {
      if (typeof delta[name] !== "string") continue;
      late(delta[name]);
      draft.slot(choice.text(name), delta, name);
    }
    const calls = delta.tool_calls ?? [];
    if (!Array.isArray(calls)) throw new AnswerUnreadable("a delta whose tool_calls are no list");
    for (const call of calls) {
      if (!isObject(call) || !isIndex(call.index)) {
        throw new AnswerUnreadable("a tool call without an index");
      }
      const fn = call.function ?? {};
      if (!isObject(fn)) throw new AnswerUnreadable("a tool call whose function is not an object");
      const streams = choice.call(call.index);
      if (typeof fn.name === "string") {
        late(fn.name);
        draft.slot(streams.name, fn, "name");
      }
      if (typeof fn.arguments === "string") {
        late(fn.arguments);
        draft.slot(streams.arguments, fn, "arguments");
      }
    }
  }

  end(): void {
    for (const choice of this.#choices.values()) choice.end();
  }

  cutEvent(message: string): string {
    const data = { error: { message, type: "server_error", code: "model_answer_unreadable" } };
    return `data: ${JSON.stringify(data)}\n\n`;
  }
}

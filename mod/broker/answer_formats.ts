/**
 * The two streamed wire formats, read event by event for redaction. Each names the texts a worker
 * joins across events, and each such text is one stream, redacted as one continuous text:
 *
 * - Anthropic Messages: the text of every text block of the message (gurt's own worker joins the
 *   blocks, so a value cut between two blocks is caught too), the thinking likewise, and each
 *   tool_use block's `partial_json`, read as JSON and as plain text (tool_input_stream.ts).
 * - OpenAI chat completions: per choice, `content`, `refusal`, `reasoning_content` and
 *   `reasoning`; per tool call, its `function.name` and its `function.arguments`, read as JSON and
 *   as plain text.
 *
 * Every other string of an event (ids, a signature, a citation, an error, a field gurt does not
 * know) is redacted whole, decoded. An event that breaks the order the services write in (a block
 * out of index order or opened while another is, a delta of a type its block does not take, two
 * entries for one choice in a chunk, a choice the request did not ask for, text after a choice has
 * finished) is refused, since a worker could join its text in a way the relay did not read it.
 *
 * Events keep their order, so while the end of a text is held back the events after it wait too:
 * a text block that ends in what could be the start of a value holds the blocks after it until
 * the next text block, or the message's end, decides it.
 */
import { AnswerUnreadable, redactInPlace } from "./json_text_stream.ts";
import { Piece, PieceStream, type TextRedaction } from "./piece_stream.ts";
import { ToolInputStream } from "./tool_input_stream.ts";

type Fields = Record<string, unknown>;

/** One event's data, read: the pieces it carries and how to write it back. */
export class Draft {
  readonly pieces: Piece[] = [];
  readonly #slots: { holder: Fields; key: string; piece: Piece }[] = [];
  #changed = false;

  constructor(readonly original: string, readonly value: Fields | null) {}

  /** Adds `holder[key]`, a string, to `stream` as a piece of this event. */
  slot(stream: PieceStream | ToolInputStream, holder: Fields, key: string): void {
    const piece = new Piece(holder[key] as string);
    this.pieces.push(piece);
    this.#slots.push({ holder, key, piece });
    stream.push(piece, piece.original);
  }

  /** Notes that the event's value was changed, so it is written again. */
  rewritten(): void {
    this.#changed = true;
  }

  /** Redacts every other string of the event whole (the pieces' fields are written over later). */
  redactRest(redaction: TextRedaction): void {
    if (this.value !== null && redactInPlace(this.value, redaction)) this.#changed = true;
  }

  /** Whether every piece has been decided, so the event can go. */
  get ready(): boolean {
    return this.pieces.every((piece) => piece.ready);
  }

  /** The data to send: the original text when nothing in it changed. */
  data(): string {
    let changed = this.#changed;
    for (const { holder, key, piece } of this.#slots) {
      holder[key] = piece.out;
      if (piece.out !== piece.original) changed = true;
    }
    return changed ? JSON.stringify(this.value) : this.original;
  }
}

/** A wire format's reading of a streamed answer, event by event. */
export interface AnswerFormat {
  /** Its name in messages. */
  readonly name: string;
  /** Reads one event's data; throws AnswerUnreadable when it cannot. */
  read(data: string): Draft;
  /** The answer has ended: every text still open is decided. */
  end(): void;
  /** The event that ends an answer the relay cut off, in this format's error shape. */
  cutEvent(message: string): string;
}

/** An event's data as a JSON object; throws AnswerUnreadable when it is not one. */
export function parseObject(data: string): Fields {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new AnswerUnreadable("an event's data is not JSON");
  }
  if (!isObject(value)) throw new AnswerUnreadable("an event's data is not a JSON object");
  return value;
}

/** Whether `value` is a JSON object. */
export function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether `value` is an index: a safe integer, 0 or more. */
export function isIndex(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** True when `holder[key]` is a string; throws when it is not (a delta of its type must have it). */
export function mustBeString(holder: Fields, field: { key: string; what: string }): true {
  const { key, what } = field;
  if (typeof holder[key] === "string") return true;
  throw new AnswerUnreadable(`${what} has no string ${key}`);
}

/**
 * The deltas each Anthropic block type may carry; a block of another type may carry none. A delta
 * of a type its block does not take is refused: the relay would read it as one text while a worker
 * reads it as another, or drops it.
 */
const BLOCK_DELTAS = new Map<string, string[]>([
  ["text", ["text_delta", "citations_delta"]],
  ["thinking", ["thinking_delta", "signature_delta"]],
  ["tool_use", ["input_json_delta"]],
]);

/** The one block of an Anthropic message that is open. */
interface OpenBlock {
  index: number;
  type: string;
  /** A tool_use block's input, read as JSON. */
  json: ToolInputStream | null;
}

/**
 * Anthropic's Messages API, streamed, read as strictly as the service writes it: message_start with
 * no content yet, then block 0, 1, 2 … one at a time (content_block_start i, its deltas,
 * content_block_stop i), each delta of a type its block takes, then message_delta and
 * message_stop. Then the order the relay reads the texts in is the order every worker joins them in
 * (by index, per block, or all text blocks together), and only one block's state is kept at a time.
 */
export class AnthropicAnswer implements AnswerFormat {
  readonly name = "Anthropic Messages events";
  readonly #redaction: TextRedaction;
  readonly #text: PieceStream;
  readonly #thinking: PieceStream;
  #block: OpenBlock | null = null;
  /** The index the next block must have. */
  #next = 0;
  #started = false;
  #stopped = false;

  constructor(redaction: TextRedaction) {
    this.#redaction = redaction;
    this.#text = new PieceStream(redaction);
    this.#thinking = new PieceStream(redaction);
  }

  read(data: string): Draft {
    const event = parseObject(data);
    if (this.#stopped) throw new AnswerUnreadable("an event after message_stop");
    const draft = new Draft(data, event);
    switch (event.type) {
      case "message_start": {
        if (this.#started) throw new AnswerUnreadable("a second message_start");
        this.#started = true;
        // The service sends the message with no content yet. A client keeps this message and
        // adds the blocks to it, so text in it would be joined to deltas the relay reads as
        // another block's: such content is dropped, never passed on.
        const message = event.message;
        if (
          isObject(message) && message.content !== undefined &&
          !(Array.isArray(message.content) && message.content.length === 0)
        ) {
          message.content = [];
          draft.rewritten();
        }
        break;
      }
      case "content_block_start":
        this.#startBlock(draft, event);
        break;
      case "content_block_delta": {
        const block = this.#open(event, "content_block_delta");
        const delta = event.delta;
        if (!isObject(delta)) throw new AnswerUnreadable("a content_block_delta with no delta");
        const type = String(delta.type);
        if (!(BLOCK_DELTAS.get(block.type) ?? []).includes(type)) {
          // Named only when gurt knows them: the reason must not quote the answer.
          const known = [...BLOCK_DELTAS.values()].flat().includes(type);
          throw new AnswerUnreadable(
            `a content_block_delta of ${known ? `type ${type}` : "a type gurt does not know"} for ${
              BLOCK_DELTAS.has(block.type) ? `a ${block.type} block` : "a block that takes none"
            }`,
          );
        }
        if (type === "text_delta" && mustBeString(delta, { key: "text", what: "a text_delta" })) {
          draft.slot(this.#text, delta, "text");
        } else if (
          type === "thinking_delta" &&
          mustBeString(delta, { key: "thinking", what: "a thinking_delta" })
        ) {
          draft.slot(this.#thinking, delta, "thinking");
        } else if (
          type === "input_json_delta" &&
          mustBeString(delta, { key: "partial_json", what: "an input_json_delta" })
        ) {
          draft.slot(block.json!, delta, "partial_json");
        }
        // signature_delta and citations_delta are redacted whole: a worker sets those, it does not
        // join them.
        break;
      }
      case "content_block_stop":
        this.#open(event, "content_block_stop").json?.end();
        this.#block = null;
        break;
      case "message_delta":
        this.#betweenBlocks("message_delta");
        break;
      case "message_stop":
        this.#betweenBlocks("message_stop");
        this.end();
        this.#stopped = true;
        break;
    }
    draft.redactRest(this.#redaction);
    return draft;
  }

  end(): void {
    this.#text.end();
    this.#thinking.end();
    this.#block?.json?.end();
  }

  cutEvent(message: string): string {
    const data = { type: "error", error: { type: "api_error", message } };
    return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
  }

  #startBlock(draft: Draft, event: Fields): void {
    this.#betweenBlocks("content_block_start");
    if (event.index !== this.#next) {
      throw new AnswerUnreadable(
        `a content_block_start out of order (block ${this.#next} was next)`,
      );
    }
    const block = event.content_block;
    if (!isObject(block) || typeof block.type !== "string") {
      throw new AnswerUnreadable("a content_block_start with no block, or one with no type");
    }
    this.#next++;
    this.#block = { index: this.#next - 1, type: block.type, json: null };
    if (block.type === "text" && typeof block.text === "string") {
      draft.slot(this.#text, block, "text");
    } else if (block.type === "thinking" && typeof block.thinking === "string") {
      draft.slot(this.#thinking, block, "thinking");
    } else if (block.type === "tool_use") {
      // A worker reads these as text whatever they are: a number could spell a value.
      mustBeString(block, { key: "id", what: "a tool_use block" });
      mustBeString(block, { key: "name", what: "a tool_use block" });
      this.#block.json = new ToolInputStream(this.#redaction);
    }
  }

  #inMessage(type: string): void {
    if (!this.#started) throw new AnswerUnreadable(`a ${type} before message_start`);
  }

  /** Checks that `type` comes in the message, with no block open. */
  #betweenBlocks(type: string): void {
    this.#inMessage(type);
    if (this.#block !== null) {
      throw new AnswerUnreadable(`a ${type} while block ${this.#block.index} is still open`);
    }
  }

  /** The open block that `event` names; throws when it names another. */
  #open(event: Fields, type: string): OpenBlock {
    this.#inMessage(type);
    const block = this.#block;
    if (block === null || event.index !== block.index) {
      throw new AnswerUnreadable(`a ${type} for a block that is not the one open`);
    }
    return block;
  }
}

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

/**
 * Anthropic Messages, streamed, read event by event for redaction (OpenAI's two streamed formats
 * are chat_stream.ts and responses_stream.ts). Each text a worker joins across events is one
 * stream, redacted as one continuous text: the text of every text block of the message (gurt's own
 * worker joins the blocks, so a value cut between two blocks is caught too), the thinking likewise,
 * and each tool_use block's `partial_json`, read as JSON and as plain text (tool_input_stream.ts).
 *
 * Every other string of an event (ids, a signature, a citation, an error, a field gurt does not
 * know) is redacted whole, decoded. An event that breaks the order the service writes in (a block
 * out of index order or opened while another is, a delta of a type its block does not take) is
 * refused, since a worker could join its text in a way the model endpoint did not read it.
 *
 * Events keep their order, so while the end of a text is held back the events after it wait too:
 * a text block that ends in what could be the start of a value holds the blocks after it until
 * the next text block, or the message's end, decides it.
 */
import { AnswerUnreadable } from "./json_text_stream.ts";
import {
  type AnswerFormat,
  Draft,
  type Fields,
  isObject,
  mustBeString,
  parseObject,
} from "./event_draft.ts";
import { PieceStream } from "./piece_stream.ts";
import type { TextRedaction } from "../vault/mod.ts";
import { ToolInputStream } from "./tool_input_stream.ts";

/**
 * The deltas each Anthropic block type may carry; a block of another type may carry none. A delta
 * of a type its block does not take is refused: the endpoint would read it as one text while a worker
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
 * message_stop. Then the order the endpoint reads the texts in is the order every worker joins them in
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
        // adds the blocks to it, so text in it would be joined to deltas the endpoint reads as
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

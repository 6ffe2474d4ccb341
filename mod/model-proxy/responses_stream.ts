/**
 * OpenAI's Responses API, streamed, read for redaction as strictly as the service writes it:
 * response.created (or queued) with no output yet, then output item 0, 1, 2 … one at a time
 * (response.output_item.added i, its parts and deltas, response.output_item.done i), a message's or
 * a reasoning item's parts one at a time likewise, each delta for the item and part that is open
 * and of the type it takes, then response.completed, response.incomplete or response.failed.
 *
 * The texts a client joins across events, each one stream redacted as one continuous text: the
 * output text of every message (the SDK's `output_text` joins them all), the refusals, the
 * reasoning summaries, the reasoning texts, and per item a function call's `arguments` (read as JSON
 * and as plain text) and a custom tool call's `input`. Every other string (the `.done` events'
 * whole texts, the final response's output, ids) is redacted whole; where a client joins such
 * strings (a message's parts, the final output's texts) a value that only the joining spells is
 * refused. A delta event of a type gurt does not know is refused, since its text is joined by
 * someone the endpoint does not read for.
 */
import {
  type AnswerFormat,
  Draft,
  isIndex,
  isObject,
  mustBeString,
  parseObject,
} from "./event_draft.ts";
import { AnswerUnreadable } from "./json_text_stream.ts";
import { PieceStream } from "./piece_stream.ts";
import type { TextRedaction } from "../vault/mod.ts";
import { ToolInputStream } from "./tool_input_stream.ts";

type Fields = Record<string, unknown>;

/** The one output item that is open, and its one part that is open. */
interface OpenItem {
  index: number;
  type: string;
  id: unknown;
  /** A function call's arguments, or a custom tool call's input. */
  input: ToolInputStream | PieceStream | null;
  /** The index the item's next part (content or summary) must have. */
  nextPart: number;
  part: { index: number; type: string } | null;
}

/** The part delta types, with the part type each takes and the field it carries. */
const PART_DELTAS = new Map<string, { part: string; field: string }>([
  ["response.output_text.delta", { part: "output_text", field: "delta" }],
  ["response.refusal.delta", { part: "refusal", field: "delta" }],
  ["response.reasoning_text.delta", { part: "reasoning_text", field: "delta" }],
  ["response.reasoning_summary_text.delta", { part: "summary_text", field: "delta" }],
]);

/** The event types that open a response, with no output yet. */
const OPENING = ["response.created", "response.queued", "response.in_progress"];

/** The event types that end a response. */
const ENDING = ["response.completed", "response.incomplete", "response.failed"];

/** The Responses API's streamed events. */
export class ResponsesAnswer implements AnswerFormat {
  readonly name = "OpenAI Responses events";
  readonly #redaction: TextRedaction;
  /** Joined streams, by part type (output_text, refusal, reasoning_text, summary_text). */
  readonly #texts = new Map<string, PieceStream>();
  #item: OpenItem | null = null;
  #next = 0;
  #started = false;
  #stopped = false;

  constructor(redaction: TextRedaction) {
    this.#redaction = redaction;
  }

  read(data: string): Draft {
    const event = parseObject(data);
    if (this.#stopped) throw new AnswerUnreadable("an event after the response ended");
    const draft = new Draft(data, event);
    const type = String(event.type);
    if (type === "error") {
      // Anywhere: redacted whole.
    } else if (OPENING.includes(type)) {
      if (this.#item !== null || this.#next > 0) {
        throw new AnswerUnreadable(`a ${type} after the output began`);
      }
      this.#started = true;
      const response = event.response;
      // A client keeps this response and adds the items to it: output in it is dropped.
      if (isObject(response) && Array.isArray(response.output) && response.output.length > 0) {
        response.output = [];
        draft.rewritten();
      }
    } else if (ENDING.includes(type)) {
      this.#between(type);
      this.end();
      this.#stopped = true;
    } else if (type === "response.output_item.added") {
      this.#addItem(draft, event);
    } else if (type === "response.output_item.done") {
      const item = this.#open(event, type);
      if (item.part !== null) throw new AnswerUnreadable(`a ${type} while a part is still open`);
      item.input?.end();
      this.#item = null;
    } else if (
      type === "response.content_part.added" || type === "response.reasoning_summary_part.added"
    ) {
      this.#addPart(draft, event, type);
    } else if (
      type === "response.content_part.done" || type === "response.reasoning_summary_part.done"
    ) {
      this.#openPart(event, type);
      this.#item!.part = null;
    } else if (PART_DELTAS.has(type)) {
      const { part, field } = PART_DELTAS.get(type)!;
      if (this.#openPart(event, type).type !== part) {
        throw new AnswerUnreadable(`a ${type} for a part of another type`);
      }
      mustBeString(event, { key: field, what: `a ${type}` });
      draft.slot(this.#text(part), event, field);
    } else if (
      type === "response.function_call_arguments.delta" ||
      type === "response.custom_tool_call_input.delta"
    ) {
      const item = this.#open(event, type);
      const takes = type === "response.function_call_arguments.delta"
        ? "function_call"
        : "custom_tool_call";
      if (item.type !== takes || item.input === null) {
        throw new AnswerUnreadable(`a ${type} for an item of another type`);
      }
      mustBeString(event, { key: "delta", what: `a ${type}` });
      draft.slot(item.input, event, "delta");
    } else if (type.endsWith(".delta")) {
      // Named only when gurt knows it: the reason must not quote the answer.
      throw new AnswerUnreadable("a delta event of a type gurt does not know");
    } else if (!this.#started) {
      throw new AnswerUnreadable("an event before response.created");
    }
    draft.redactRest(this.#redaction);
    this.#refuseJoined(event);
    return draft;
  }

  end(): void {
    for (const stream of this.#texts.values()) stream.end();
    this.#item?.input?.end();
  }

  cutEvent(message: string): string {
    const data = { type: "error", code: "model_answer_unreadable", message, param: null };
    return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
  }

  #text(part: string): PieceStream {
    let stream = this.#texts.get(part);
    if (stream === undefined) this.#texts.set(part, stream = new PieceStream(this.#redaction));
    return stream;
  }

  #addItem(draft: Draft, event: Fields): void {
    this.#between("response.output_item.added");
    if (event.output_index !== this.#next) {
      throw new AnswerUnreadable(
        `a response.output_item.added out of order (item ${this.#next} was next)`,
      );
    }
    const item = event.item;
    if (!isObject(item) || typeof item.type !== "string") {
      throw new AnswerUnreadable("a response.output_item.added with no item, or one with no type");
    }
    this.#next++;
    const open: OpenItem = {
      index: this.#next - 1,
      type: item.type,
      id: item.id,
      input: null,
      nextPart: 0,
      part: null,
    };
    this.#item = open;
    // Parts come in their own events: any in the item are dropped, as a response's output is.
    for (const parts of ["content", "summary"]) {
      if (Array.isArray(item[parts]) && (item[parts] as unknown[]).length > 0) {
        item[parts] = [];
        draft.rewritten();
      }
    }
    if (item.type === "function_call") {
      mustBeString(item, { key: "name", what: "a function_call item" });
      open.input = new ToolInputStream(this.#redaction);
      if (typeof item.arguments === "string") draft.slot(open.input, item, "arguments");
    } else if (item.type === "custom_tool_call") {
      open.input = new PieceStream(this.#redaction);
      if (typeof item.input === "string") draft.slot(open.input, item, "input");
    }
  }

  #addPart(draft: Draft, event: Fields, type: string): void {
    const item = this.#open(event, type);
    const index = type === "response.content_part.added"
      ? event.content_index
      : event.summary_index;
    if (item.part !== null || index !== item.nextPart) {
      throw new AnswerUnreadable(`a ${type} out of order (part ${item.nextPart} was next)`);
    }
    const part = event.part;
    if (!isObject(part) || typeof part.type !== "string") {
      throw new AnswerUnreadable(`a ${type} with no part, or one with no type`);
    }
    item.nextPart++;
    item.part = { index: item.nextPart - 1, type: part.type };
    const field = part.type === "refusal" ? "refusal" : "text";
    if (PART_TYPES.includes(part.type) && typeof part[field] === "string") {
      draft.slot(this.#text(part.type), part, field);
    }
  }

  #between(type: string): void {
    if (!this.#started) throw new AnswerUnreadable(`a ${type} before response.created`);
    if (this.#item !== null) {
      throw new AnswerUnreadable(`a ${type} while item ${this.#item.index} is still open`);
    }
  }

  /** The open item that `event` names; throws when it names another. */
  #open(event: Fields, type: string): OpenItem {
    if (!this.#started) throw new AnswerUnreadable(`a ${type} before response.created`);
    const item = this.#item;
    const named = type === "response.output_item.done" && isObject(event.item)
      ? event.item.id
      : event.item_id;
    if (
      item === null || event.output_index !== item.index ||
      (named !== undefined && named !== item.id)
    ) {
      throw new AnswerUnreadable(`a ${type} for an item that is not the one open`);
    }
    return item;
  }

  /** The open part that `event` names; throws when it names another. */
  #openPart(event: Fields, type: string): { index: number; type: string } {
    const item = this.#open(event, type);
    const index = type.includes("summary") ? event.summary_index : event.content_index;
    if (item.part === null || !isIndex(index) || index !== item.part.index) {
      throw new AnswerUnreadable(`a ${type} for a part that is not the one open`);
    }
    return item.part;
  }

  /**
   * Refuses an event whose whole texts, each redacted, spell a value once a client joins them: a
   * message's parts, or all of a response's output (the SDK's `output_text`).
   */
  #refuseJoined(event: Fields): void {
    const texts: string[] = [];
    collectTexts(event, texts);
    const joined = texts.join("");
    if (texts.length > 1 && this.#redaction.redact(joined) !== joined) {
      throw new AnswerUnreadable("an event's texts spell a vault value once joined");
    }
  }
}

/** The part types whose texts are joined streams. */
const PART_TYPES = ["output_text", "refusal", "reasoning_text", "summary_text"];

/** Every text of an output part in `value`, in order, as a client would join them. */
function collectTexts(value: unknown, into: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) collectTexts(item, into);
    return;
  }
  if (!isObject(value)) return;
  if (typeof value.type === "string" && PART_TYPES.includes(value.type)) {
    const text = value.type === "refusal" ? value.refusal : value.text;
    if (typeof text === "string") into.push(text);
    return;
  }
  for (const key of ["response", "item", "output", "content", "summary", "part"]) {
    if (key in value) collectTexts(value[key], into);
  }
}

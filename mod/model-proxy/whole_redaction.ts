/**
 * A whole (not streamed) model answer, redacted as a worker reads it, in the format of the route it
 * answers (redactWhole), and always written again, never the service's bytes. Every decoded string is
 * redacted, keys included, and every string is read as JSON text too where it is such (a tool
 * call's `arguments`, a top-level JSON string included), so escapes inside it are decoded. Texts a
 * client joins are redacted as one text: an Anthropic message's text blocks, which gurt's worker
 * joins into one reply; a Responses answer's output texts of each part type across its output
 * (the SDK's `output_text` joins every message's), as its stream's are. A value that runs from one
 * block into the next becomes `[a vault key]` in the block where it starts, and the blocks it runs
 * on into lose their part of it, as in a stream.
 * What a worker reads as text must be a string (a number could spell a value in a way no
 * redaction of its digits sees), and no form of a value may be left in the text sent: an answer
 * that breaks either is refused, never passed on: its text could spell a value no redaction of it
 * sees. Pure.
 */
import { type Fields, isObject } from "./event_draft.ts";
import { AnswerUnreadable, redactInPlace } from "./json_text_stream.ts";
import { Piece, PieceStream } from "./piece_stream.ts";
import type { RouteKind } from "./routes.ts";
import { unreadableMessage } from "./stream_redaction.ts";
import type { TextRedaction } from "../vault/mod.ts";

/**
 * The format a whole answer is read as: Anthropic Messages, OpenAI Chat Completions, OpenAI
 * Responses, or any other JSON (a token count, a model list), whose strings are each redacted.
 */
export type WholeAnswerKind = "anthropic" | "openai" | "responses" | "json";

/** How redactWholeAnswer reads and writes an answer. */
export interface WholeAnswerOptions {
  redaction: TextRedaction;
  kind: WholeAnswerKind;
  /**
   * Always write the redacted value again, never pass on the service's text as it is: a value
   * under the first of two equal keys is not in the parsed value, so only writing it again drops it.
   */
  rewrite?: boolean;
}

/**
 * `text`, a whole answer in `kind`'s format, redacted; the original text when nothing in it
 * changed. Throws AnswerUnreadable, with a reason that never quotes it, when it cannot be passed on.
 */
export function redactWholeAnswer(text: string, how: WholeAnswerOptions): string {
  const { redaction, kind } = how;
  const holder: unknown[] = [];
  try {
    holder.push(JSON.parse(text));
  } catch {
    throw new AnswerUnreadable("its body is not JSON");
  }
  const answer = holder[0];
  let changed = false;
  if (kind === "anthropic") changed = redactAnthropicText(answer, redaction);
  else if (kind === "responses") changed = redactResponsesText(answer, redaction);
  else if (kind === "openai") checkOpenAICalls(answer);
  if (redactInPlace(holder, redaction)) changed = true;
  const out = changed || how.rewrite === true ? JSON.stringify(holder[0]) : text;
  // The last check: a value in what no redaction reads (a number, say) cannot be replaced there.
  if (redaction.redact(out) !== out) {
    throw new AnswerUnreadable("it holds a vault value where it cannot be replaced");
  }
  return out;
}

/** Redacts the text blocks of an Anthropic message as one text; returns whether any changed. */
function redactAnthropicText(answer: unknown, redaction: TextRedaction): boolean {
  if (!isObject(answer) || !Array.isArray(answer.content)) return false;
  const stream = new PieceStream(redaction);
  const texts: { block: Fields; piece: Piece }[] = [];
  for (const block of answer.content) {
    if (!isObject(block)) continue;
    if (block.type === "text") {
      mustBeString(block, "text", "a text block");
      const piece = new Piece(block.text as string);
      stream.push(piece, piece.original);
      texts.push({ block, piece });
    } else if (block.type === "tool_use") {
      mustBeString(block, "id", "a tool_use block");
      mustBeString(block, "name", "a tool_use block");
    }
  }
  stream.end();
  let changed = false;
  for (const { block, piece } of texts) {
    if (piece.out === piece.original) continue;
    block.text = piece.out;
    changed = true;
  }
  return changed;
}

/** The Responses part types whose texts a client joins, with the field each carries its text in. */
const RESPONSES_PARTS = new Map<string, string>([
  ["output_text", "text"],
  ["refusal", "refusal"],
  ["reasoning_text", "text"],
  ["summary_text", "text"],
]);

/**
 * Redacts the texts of a Responses answer's output that a client joins, each part type's as one
 * text across every item (a message's content, a reasoning item's summary and content); checks
 * that a tool call's name, id and input are strings. Returns whether any text changed.
 */
function redactResponsesText(answer: unknown, redaction: TextRedaction): boolean {
  if (!isObject(answer) || !Array.isArray(answer.output)) return false;
  const streams = new Map<string, PieceStream>();
  const texts: { part: Fields; field: string; piece: Piece }[] = [];
  for (const item of answer.output) {
    if (!isObject(item)) continue;
    if (item.type === "function_call") {
      mustBeString(item, "name", "a function_call item");
      mustBeString(item, "arguments", "a function_call item");
      if (item.call_id !== undefined) mustBeString(item, "call_id", "a function_call item");
    } else if (item.type === "custom_tool_call") {
      mustBeString(item, "name", "a custom_tool_call item");
      mustBeString(item, "input", "a custom_tool_call item");
      if (item.call_id !== undefined) mustBeString(item, "call_id", "a custom_tool_call item");
    }
    for (const list of [item.content, item.summary]) {
      if (!Array.isArray(list)) continue;
      for (const part of list) {
        if (!isObject(part) || typeof part.type !== "string") continue;
        const field = RESPONSES_PARTS.get(part.type);
        if (field === undefined) continue;
        mustBeString(part, field, `a part of type ${part.type}`);
        let stream = streams.get(part.type);
        if (stream === undefined) streams.set(part.type, stream = new PieceStream(redaction));
        const piece = new Piece(part[field] as string);
        stream.push(piece, piece.original);
        texts.push({ part, field, piece });
      }
    }
  }
  for (const stream of streams.values()) stream.end();
  let changed = false;
  for (const { part, field, piece } of texts) {
    if (piece.out === piece.original) continue;
    part[field] = piece.out;
    changed = true;
  }
  return changed;
}

/** Checks that what a worker reads of an OpenAI completion's tool calls as text are strings. */
function checkOpenAICalls(answer: unknown): void {
  const choices = isObject(answer) && Array.isArray(answer.choices) ? answer.choices : [];
  for (const choice of choices) {
    const message = isObject(choice) && isObject(choice.message) ? choice.message : {};
    const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
    for (const call of calls) {
      if (!isObject(call)) continue;
      if (call.id !== undefined) mustBeString(call, "id", "a tool call");
      const fn = isObject(call.function) ? call.function : {};
      mustBeString(fn, "name", "a tool call's function");
      if (fn.arguments !== undefined) mustBeString(fn, "arguments", "a tool call's function");
    }
  }
}

function mustBeString(holder: Fields, key: string, what: string): void {
  if (typeof holder[key] !== "string") throw new AnswerUnreadable(`${what} has no string ${key}`);
}

/** How each route's whole answer is read, and what it is called in a refusal's sentence. */
const WHOLE_FORMATS: Record<RouteKind, { kind: WholeAnswerKind; name: string }> = {
  messages: { kind: "anthropic", name: "an Anthropic Messages answer" },
  count_tokens: { kind: "json", name: "an Anthropic token count" },
  models: { kind: "json", name: "a model list" },
  responses: { kind: "responses", name: "an OpenAI Responses answer" },
  chat_completions: { kind: "openai", name: "an OpenAI chat completion" },
};

/** A whole answer redacted (its text to send), or refused (why, and the client's sentence). */
export type WholeRedaction =
  | { kind: "sent"; text: string }
  | { kind: "refused"; reason: string; message: string };

/** `text`, the whole answer of a `route` request with this `status`, redacted or refused. */
export function redactWhole(
  text: string,
  answer: { route: RouteKind; status: number; redaction: TextRedaction },
): WholeRedaction {
  const format = WHOLE_FORMATS[answer.route];
  try {
    const redacted = redactWholeAnswer(text, {
      redaction: answer.redaction,
      kind: format.kind,
      rewrite: true,
    });
    return { kind: "sent", text: redacted };
  } catch (error) {
    if (!(error instanceof AnswerUnreadable)) throw error;
    // The reason never quotes the answer.
    const reason = `${error.message}, status ${answer.status}`;
    return { kind: "refused", reason, message: unreadableMessage(format.name, reason) };
  }
}

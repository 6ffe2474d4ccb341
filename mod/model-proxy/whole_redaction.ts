/**
 * A whole (not streamed) answer of the model endpoint, redacted as a client reads it: by the
 * broker's redactWholeAnswer, in the format of the route it answers (the texts a client joins as
 * one text, every string decoded, a tool call's arguments read as JSON), and always written again,
 * never the service's bytes. An answer that cannot be read so (not JSON, a text that is not a
 * string, a value where no redaction can replace it) is refused, never passed on: its text could
 * spell a value no redaction of it sees. Pure.
 */
import {
  AnswerUnreadable,
  redactWholeAnswer,
  type TextRedaction,
  unreadableMessage,
  type WholeAnswerKind,
} from "../broker/mod.ts";
import type { RouteKind } from "./routes.ts";

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

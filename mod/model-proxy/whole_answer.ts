/**
 * A whole (not streamed) model answer, as the endpoint gives it: read (at most MOST_WHOLE_ANSWER),
 * its usage reported, redacted in its route's format (or refused), then sent. An answer whose
 * charge could not be written is not given.
 */
import { readRequestBody } from "../net/mod.ts";
import type { TextRedaction } from "../vault/mod.ts";
import { type AnswerUsage, metered, wholeAnswerUsage } from "./answer_usage.ts";
import { auditDownMessage, errorAnswer, unreachableMessage } from "./service_errors.ts";
import type { UsageOf } from "./usage_event.ts";
import { redactWhole } from "./whole_redaction.ts";

/** The longest whole (not streamed) answer the endpoint reads: a model's answer is far shorter. */
const MOST_WHOLE_ANSWER = 16 * 1024 * 1024;

class TooLarge extends Error {}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What wholeAnswer needs besides the service's answer. */
export interface WholeAnswerOptions {
  /** The answer's headers, as the client gets them. */
  headers: Headers;
  usageOf: UsageOf;
  /** Called once the answer has been read (or failed to be). */
  release: () => void;
  /** The service's base URL, for the sentence of an answer that broke off. */
  base: string;
  redaction?: () => TextRedaction;
  log: (line: string) => void;
  /** Called for an answer with no usage to charge: read in part, an error, a route not billed. */
  unbilled: () => void;
  /** Reports the answer's usage: false when its charge could not be written. */
  report: (usage: AnswerUsage) => Promise<boolean>;
}

/** Reads, meters and redacts a whole answer: the response the client gets. */
export async function wholeAnswer(
  upstream: Response,
  answer: WholeAnswerOptions,
): Promise<Response> {
  const { headers, usageOf, release } = answer;
  let bytes: Uint8Array<ArrayBuffer>;
  try {
    bytes = await readRequestBody(upstream, {
      limit: MOST_WHOLE_ANSWER,
      tooLarge: () => new TooLarge(),
    });
  } catch (error) {
    answer.unbilled();
    const why = error instanceof TooLarge
      ? `answered more than ${MOST_WHOLE_ANSWER / 1024 / 1024} MiB in one whole answer`
      : `broke off its answer (${describe(error)})`;
    return errorAnswer(usageOf.service, {
      error: "unreachable",
      message: unreachableMessage(answer.base, why),
    });
  } finally {
    release();
  }
  const text = new TextDecoder().decode(bytes);
  // A whole answer whose charge could not be written is not given (its hold is recovered later).
  const billed = metered(usageOf.kind) && upstream.ok;
  if (!billed) answer.unbilled();
  const charged = !billed || await answer.report(wholeAnswerUsage(usageOf.kind, text));
  if (!charged) {
    return errorAnswer(usageOf.service, {
      error: "audit_unavailable",
      message: auditDownMessage("given"),
    });
  }
  if (upstream.status === 204 || upstream.status === 304) {
    return new Response(null, { status: upstream.status, headers });
  }
  const redaction = answer.redaction;
  if (redaction === undefined) return new Response(bytes, { status: upstream.status, headers });
  const redacted = redactWhole(text, {
    route: usageOf.kind,
    status: upstream.status,
    redaction: redaction(),
  });
  if (redacted.kind === "sent") {
    return new Response(redacted.text, { status: upstream.status, headers });
  }
  answer.log(
    `gurt model endpoint: a whole answer to ${usageOf.path} was refused: ${redacted.reason}`,
  );
  return errorAnswer(usageOf.service, { error: "unreachable", message: redacted.message });
}

/**
 * A request relayed as it is, for a path whose body the endpoint does not read as a model request
 * (Factory's settings, limits, session copy and telemetry): its body drawn on the task's total, the
 * placeholder replaced by the vault's key in the header it came in, the answer's text redacted as it
 * streams (a vault value split across chunks included).
 */
import { readRequestBody } from "../net/mod.ts";
import type { ServiceTarget } from "./proxy_events.ts";
import type { TextRedaction } from "../vault/mod.ts";
import { answerHeaders, carriesPlaceholder, serviceHeaders } from "./relay_headers.ts";
import {
  errorAnswer,
  incompleteMessage,
  noKeyMessage,
  unreachableMessage,
} from "./service_errors.ts";

/** What plainAnswer needs. */
export interface PlainRelay {
  /** The service: its origin and the vault's key for it. */
  target: ServiceTarget;
  /** The task's placeholder: only it is replaced by the key; another credential goes as it is. */
  placeholder: string;
  maxBodyBytes: number;
  drawBytes: (count: number) => string | null;
  redaction?: () => TextRedaction;
  signal: AbortSignal;
  /** Told of the body just before it is sent (undefined: none). */
  sending?: (body: Uint8Array | undefined) => void;
}

/** Why a plain request was not sent: cut short, too large, or over the task's total (a sentence). */
class PlainRefused extends Error {
  constructor(readonly status: 400 | 413 | 429, message: string) {
    super(message);
  }
}

/**
 * Sends `request` on to the service and gives its answer, redacted; the endpoint's own errors in
 * OpenAI's error format (Factory's clients read it).
 */
export async function plainAnswer(request: Request, relay: PlainRelay): Promise<Response> {
  const key = relay.target.key() ?? "";
  if (key === "") {
    // Without the owner's key nothing goes to the service: not even a request with no key, which
    // would carry the task's session or telemetry to a host outside its list. Droid goes on
    // without these answers (a 404 it takes as "not there").
    if (carriesPlaceholder(request.headers, relay.placeholder)) {
      return errorAnswer("openai", { error: "no_key", message: noKeyMessage("factory") });
    }
    return errorAnswer("openai", {
      error: "not_found",
      message:
        "gurt model endpoint: the box sends requests to Factory's API only with the vault's FACTORY_API_KEY, which it has none of, so nothing went to Factory. see runbook.md#model-key-missing",
    });
  }
  try {
    return await relayPlain(request, { ...relay, key });
  } catch (error) {
    if (error instanceof PlainRefused) {
      const kind = error.status === 400
        ? "bad_request"
        : error.status === 413
        ? "too_large"
        : "busy";
      return errorAnswer("openai", { error: kind, message: error.message });
    }
    const why = `cannot be reached (${error instanceof Error ? error.message : String(error)})`;
    return errorAnswer("openai", {
      error: "unreachable",
      message: unreachableMessage(relay.target.baseUrl, why),
    });
  }
}

async function relayPlain(
  request: Request,
  relay: PlainRelay & { key: string },
): Promise<Response> {
  const url = new URL(request.url);
  let body: Uint8Array<ArrayBuffer> | undefined;
  if (request.body !== null) {
    body = await readRequestBody(request, {
      limit: relay.maxBodyBytes,
      tooLarge: () =>
        new PlainRefused(
          413,
          `gurt model endpoint: the request body is over ${relay.maxBodyBytes} bytes, the most the endpoint takes. see runbook.md#model-proxy-refused`,
        ),
    }).catch((error) => {
      if (error instanceof PlainRefused || relay.signal.aborted) throw error;
      throw new PlainRefused(400, incompleteMessage(url.pathname));
    });
    const over = relay.drawBytes(body.length);
    if (over !== null) throw new PlainRefused(429, over);
  }
  relay.sending?.(body);
  const upstream = await fetch(
    `${relay.target.baseUrl.replace(/\/+$/, "")}${url.pathname}${url.search}`,
    {
      method: request.method,
      headers: serviceHeaders(request.headers, {
        service: "openai",
        key: relay.key,
        placeholder: relay.placeholder,
      }),
      body,
      redirect: "manual",
      signal: AbortSignal.any([request.signal, relay.signal]),
    },
  );
  const redaction = relay.redaction?.();
  const headers = answerHeaders(upstream.headers, {
    redact: redaction === undefined ? undefined : (text) => redaction.redact(text),
  });
  if (upstream.body === null || redaction === undefined) {
    return new Response(upstream.body, { status: upstream.status, headers });
  }
  return new Response(upstream.body.pipeThrough(redactedText(redaction)), {
    status: upstream.status,
    headers,
  });
}

/** A byte stream's text with every vault value replaced, one held across chunks included. */
function redactedText(redaction: TextRedaction): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const spans = redaction.stream();
  let held = "";
  const emit = (
    decided: { length: number; secret: boolean }[],
    controller: TransformStreamDefaultController<Uint8Array>,
  ) => {
    let out = "";
    for (const span of decided) {
      const text = held.slice(0, span.length);
      held = held.slice(span.length);
      out += span.secret ? redaction.marker : text;
    }
    if (out !== "") controller.enqueue(encoder.encode(out));
  };
  return new TransformStream({
    transform(chunk, controller) {
      const text = decoder.decode(chunk, { stream: true });
      held += text;
      emit(spans.spans(text), controller);
    },
    flush(controller) {
      const rest = decoder.decode();
      held += rest;
      if (rest !== "") emit(spans.spans(rest), controller);
      emit(spans.endSpans(), controller);
    },
  });
}

/**
 * The headers a credential door sends each way. Towards the server: the task's, less those of one
 * connection (hop-by-hop, and any a Connection header names) and framing, with Accept-Encoding
 * set to identity (the door redacts the answer's bytes, so it takes them as they are). Towards the
 * task: the server's, less the same, each vault value replaced (mod/model-proxy's answerHeaders).
 */
import { answerHeaders as modelAnswerHeaders } from "../model-proxy/mod.ts";

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
  "accept-encoding",
]);

/** The request's headers as sent on to the server. */
export function upstreamHeaders(incoming: Headers): Headers {
  const named = new Set(
    (incoming.get("connection") ?? "").split(",").map((name) => name.trim().toLowerCase()),
  );
  const out = new Headers();
  for (const [name, value] of incoming) {
    if (HOP_BY_HOP.has(name) || named.has(name)) continue;
    out.append(name, value);
  }
  out.set("accept-encoding", "identity");
  return out;
}

/** The answer's headers as the task gets them, every vault value replaced. */
export function answerHeaders(upstream: Headers, redact: (text: string) => string): Headers {
  return modelAnswerHeaders(upstream, { redact });
}

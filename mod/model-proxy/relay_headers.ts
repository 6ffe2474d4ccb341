/**
 * The headers the endpoint sends on, each way. Every header passes but the connection's own (the
 * hop-by-hop ones, and those a Connection header names) and, towards the service, the client's
 * credentials, which are replaced by the vault's key in the header that service reads. Pure.
 */
import type { Service } from "./routes.ts";

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1), and framing. */
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
]);

/** The client's credentials: whatever it holds is a placeholder, and never leaves the box. */
const CREDENTIALS = new Set(["x-api-key", "authorization"]);

/**
 * Other headers an SDK puts a key in (Azure's, Gemini's): towards a service through the endpoint,
 * dropped as the credentials are, so the placeholder reaches no one; a provider's own key header
 * is set after.
 */
const OTHER_KEYS = new Set(["api-key", "x-goog-api-key"]);

/** The names a Connection header lists, lowercased. */
function connectionNamed(headers: Headers): Set<string> {
  const named = new Set<string>();
  for (const name of (headers.get("connection") ?? "").split(",")) {
    const trimmed = name.trim().toLowerCase();
    if (trimmed !== "") named.add(trimmed);
  }
  return named;
}

/**
 * The headers of the request to `service`: the client's, less hop-by-hop and credentials, and
 * less Accept-Encoding (the endpoint reads the answer, so it takes what its own fetch decodes),
 * with `key` set where the service reads it. With `placeholder` (a request that came to the
 * service's own host through the box's TLS), only a credential that is the placeholder is replaced,
 * by `key` in the same header; any other credential is the client's own and is left as it is.
 */
export function serviceHeaders(
  incoming: Headers,
  target: {
    service: Service;
    key: string;
    placeholder?: string;
    /** A provider's: the header its key goes in (`authorization` is sent as a Bearer token). */
    keyHeader?: string;
    /** A provider's fixed headers, set over the client's. */
    fixed?: Record<string, string>;
  },
): Headers {
  const { service, key, placeholder, keyHeader, fixed } = target;
  const named = connectionNamed(incoming);
  const out = new Headers();
  for (const [name, value] of incoming) {
    if (HOP_BY_HOP.has(name) || named.has(name)) continue;
    if (name === "accept-encoding") continue;
    if (placeholder === undefined && OTHER_KEYS.has(name)) continue;
    if (CREDENTIALS.has(name)) {
      if (placeholder === undefined) continue;
      const held = placeholderHeld(name, value, placeholder);
      if (held) out.append(name, name === "authorization" ? `Bearer ${key}` : key);
      else out.append(name, value);
      continue;
    }
    out.append(name, value);
  }
  if (placeholder !== undefined) return out;
  for (const [name, value] of Object.entries(fixed ?? {})) out.set(name, value);
  const header = (keyHeader ?? (service === "anthropic" ? "x-api-key" : "authorization"))
    .toLowerCase();
  // A client's header of that name holds its placeholder, never a key of its own.
  out.set(header, header === "authorization" ? `Bearer ${key}` : key);
  return out;
}

/** Whether a credential header `name: value` carries the task's placeholder. */
function placeholderHeld(name: string, value: string, placeholder: string): boolean {
  if (placeholder === "") return false;
  const given = name === "authorization" ? value.replace(/^Bearer\s+/i, "") : value;
  return given.trim() === placeholder;
}

/** Whether the request's credentials carry the task's placeholder (x-api-key or a Bearer token). */
export function carriesPlaceholder(incoming: Headers, placeholder: string): boolean {
  for (const name of CREDENTIALS) {
    const value = incoming.get(name);
    if (value !== null && placeholderHeld(name, value, placeholder)) return true;
  }
  return false;
}

/** A header's text as the bytes' UTF-8 reading, where fetch gave it as one char per byte. */
function asUtf8(text: string): string {
  if (!/[\u0080-\uffff]/.test(text)) return text; // all ASCII
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
  return new TextDecoder().decode(bytes);
}

/**
 * The headers of the answer to the client: the service's, less hop-by-hop, and less
 * Content-Encoding and Content-Length, since the body is sent as fetch decoded it. With `redact`
 * (the vault's redaction of a text), a header whose name holds a vault value is dropped, and one
 * whose value holds one is sent with it replaced (dropped when it reads so only as UTF-8).
 */
export function answerHeaders(
  upstream: Headers,
  options: { redact?: (text: string) => string } = {},
): Headers {
  const { redact } = options;
  const named = connectionNamed(upstream);
  const out = new Headers();
  for (const [name, value] of upstream) {
    if (HOP_BY_HOP.has(name) || named.has(name) || name === "content-encoding") continue;
    if (redact === undefined) {
      out.append(name, value);
      continue;
    }
    if (redact(name) !== name || redact(asUtf8(name)) !== asUtf8(name)) continue;
    const wide = asUtf8(value);
    if (wide !== value && redact(wide) !== wide) continue;
    out.append(name, redact(value));
  }
  return out;
}

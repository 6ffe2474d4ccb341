/**
 * The head of an HTTP request to the proxy, read without I/O: `CONNECT host:port HTTP/1.1`, or
 * an absolute-form request (`GET http://host:port/path HTTP/1.1`) that the proxy forwards in
 * origin form with `Connection: close`; and the origin-form request a client sends inside a tunnel
 * that is not TLS, forwarded the same way. The head is read as Latin-1, one character a byte, so
 * what is forwarded is the bytes the client sent. A head with a bare CR or LF, a NUL, another
 * control character or a folded line is refused whatever its kind, since an origin could read it
 * as other fields than the proxy checked.
 */
import { type CanonicalHost, canonicalHost, hostText } from "../config/mod.ts";
import { type BodyFraming, bodyFraming } from "./request_body.ts";

/** A request the proxy forwards to its origin in origin form, one per connection. */
export interface ForwardedRequest {
  /** The Host header's value, or null if the request has none. */
  hostHeader: string | null;
  /** The head to send the origin, in origin form, less its Host line if the request had none. */
  forward: (hostLine: string) => string;
  /** How the body that follows the head is framed (null: there is none). */
  body: BodyFraming;
}

/** A request head the proxy can act on, with its target's host as the client wrote it. */
export type RequestHead =
  | { kind: "connect"; host: string; port: number }
  | ({ kind: "absolute"; host: string; port: number } & ForwardedRequest);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HOP_BY_HOP = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
]);
/**
 * Fields that frame or address a request: a Connection header that names one is refused, and none
 * of them is ever dropped as hop-by-hop, so the origin reads the body the proxy framed, and no
 * more, for the host the proxy checked.
 */
const FRAMING = new Set(["content-length", "transfer-encoding", "host"]);
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ ]+ HTTP\/[0-9]\.[0-9]$/;

/**
 * The index just past the `\r\n\r\n` that ends the head in `bytes`, or -1. `from` is how many of
 * `bytes` an earlier call on the same growing buffer looked at, so a head sent a byte at a time is
 * not read again from its start at every byte.
 */
export function headEnd(bytes: Uint8Array, from = 0): number {
  for (let i = Math.max(3, from); i < bytes.length; i++) {
    if (
      bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 && bytes[i - 3] === 13
    ) return i + 1;
  }
  return -1;
}

/** Parses a request head (the text up to and including the blank line), or says what is wrong. */
export function parseRequestHead(head: string): RequestHead | { problem: string } {
  const line = requestLine(head);
  if ("problem" in line) return line;
  const { method, target } = line;
  if (method === "CONNECT") {
    const authority = splitAuthority(target);
    if (authority === null || authority.port === null) {
      return { problem: "CONNECT's target is not host:port" };
    }
    return { kind: "connect", host: authority.host, port: authority.port };
  }
  if (!target.toLowerCase().startsWith("http://")) {
    return { problem: "the target is not CONNECT host:port or an absolute http:// URL" };
  }
  const rest = target.slice("http://".length);
  const end = rest.search(/[/?#]/);
  const authority = splitAuthority(end === -1 ? rest : rest.slice(0, end));
  if (authority === null) return { problem: "the URL's authority is not host or host:port" };
  let path = end === -1 ? "/" : rest.slice(end).replace(/#.*$/, "");
  if (path.startsWith("?")) path = `/${path}`;
  const request = forwardedRequest({ ...line, path });
  if ("problem" in request) return request;
  return { kind: "absolute", host: authority.host, port: authority.port ?? 80, ...request };
}

/**
 * Parses the head of a plain-HTTP request sent inside a tunnel (the text up to and including the
 * blank line): origin form only (`GET /path HTTP/1.1`), since an origin would take an absolute URL's
 * host over the Host header; or says what is wrong.
 */
export function parseTunnelRequest(head: string): ForwardedRequest | { problem: string } {
  const line = requestLine(head);
  if ("problem" in line) return line;
  if (line.method === "CONNECT" || !line.target.startsWith("/")) {
    return { problem: "the request in a tunnel is not in origin form (GET /path HTTP/1.1)" };
  }
  return forwardedRequest({ ...line, path: line.target.replace(/#.*$/, "") });
}

/**
 * Whether the first bytes of a tunnel that is not TLS may still be an HTTP request: no byte
 * outside printable ASCII before the first CRLF, and a first line, once whole, that reads METHOD
 * TARGET HTTP/x.y. False for other protocols (and for a request with a bare LF, or a blank line
 * first), which the proxy refuses without waiting for a head's end. `from` is how many of `bytes`
 * an earlier call on the same growing buffer judged (and found true), so a first line sent a byte
 * at a time is read once, not again from its start at every byte.
 */
export function mayBeRequest(bytes: Uint8Array, from = 0): boolean {
  const judged = Math.min(from, bytes.length);
  const lineEnd = bytes.subarray(0, judged).indexOf(13);
  // A first line that ended before `from` was read whole and found a request line.
  if (lineEnd !== -1 && lineEnd + 1 < judged) return true;
  for (let i = lineEnd === -1 ? judged : lineEnd; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === 13 && (i + 1 === bytes.length || bytes[i + 1] === 10)) {
      return i + 1 === bytes.length ||
        REQUEST_LINE.test(String.fromCharCode(...bytes.subarray(0, i)));
    }
    if (byte < 0x20 || byte > 0x7e) return false;
  }
  return true;
}

/** The request line and header fields of a head, or what is wrong with them. */
function requestLine(head: string): {
  method: string;
  target: string;
  version: string;
  fields: [string, string][];
} | { problem: string } {
  const lines = head.split("\r\n");
  const framing = lineProblem(lines);
  if (framing !== null) return { problem: framing };
  const [method, target, version, ...extra] = lines[0].split(" ");
  if (extra.length > 0 || method === undefined || target === undefined) {
    return { problem: "the request line is not METHOD TARGET VERSION" };
  }
  if (!TOKEN.test(method)) return { problem: "the method is not a token" };
  if (version !== "HTTP/1.1" && version !== "HTTP/1.0") {
    return { problem: "the version is not HTTP/1.1 or HTTP/1.0" };
  }
  const fields: [string, string][] = [];
  for (const line of lines.slice(1, -2)) {
    const colon = line.indexOf(":");
    if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) {
      return { problem: "a header line is not NAME: VALUE" };
    }
    fields.push([line.slice(0, colon), line.slice(colon + 1).trim()]);
  }
  return { method, target, version, fields };
}

/**
 * What is wrong with a head's lines (split on CRLF), read as an origin might read them, or null:
 * a bare CR or LF, a NUL or another control character but HTAB (most servers take a bare LF as a
 * line's end, so a value holding one is a second field the proxy never checked), or a line that
 * starts with a space or tab (obs-fold, a line some servers join to the field before it). RFC 9112
 * lets a proxy refuse all of them; the proxy does, in every head it reads.
 */
function lineProblem(lines: readonly string[]): string | null {
  for (const [index, line] of lines.entries()) {
    for (let at = 0; at < line.length; at++) {
      const code = line.charCodeAt(at);
      if ((code < 0x20 && code !== 0x09) || code === 0x7f) {
        const what = code === 10
          ? "a bare LF"
          : code === 13
          ? "a bare CR"
          : code === 0
          ? "a NUL"
          : "a control character";
        return `the request's head holds ${what}, which an origin could read differently from the proxy`;
      }
    }
    if (index > 0 && /^[ \t]/.test(line)) {
      return "the request's head has a folded header line (obs-fold), which an origin could read differently from the proxy";
    }
  }
  return null;
}

/**
 * The request to forward in origin form to `path`: its body framed, its hop-by-hop fields
 * dropped, `Connection: close`; or what is wrong with it.
 */
function forwardedRequest(request: {
  method: string;
  path: string;
  version: string;
  fields: [string, string][];
}): ForwardedRequest | { problem: string } {
  const { method, path, version, fields } = request;
  if (!/^[\x21-\x7e]+$/.test(path)) return { problem: "the URL's path is not printable ASCII" };
  const body = bodyFraming(fields);
  if (body !== null && "problem" in body) return body;
  // HTTP/1.0 has no Transfer-Encoding: an origin may frame the body by Content-Length alone and
  // read its chunks as a second request (RFC 9112 section 6.1 calls such framing faulty).
  if (body !== null && "chunked" in body && version === "HTTP/1.0") {
    return {
      problem: "the HTTP/1.0 request has a Transfer-Encoding, which HTTP/1.0 does not have",
    };
  }
  const hosts = fields.filter(([name]) => name.toLowerCase() === "host");
  if (hosts.length > 1) return { problem: "the request has more than one Host header" };
  const named = new Set(
    fields.filter(([name]) => name.toLowerCase() === "connection")
      .flatMap(([, value]) => value.split(",").map((part) => part.trim().toLowerCase())),
  );
  if ([...FRAMING].some((name) => named.has(name))) {
    return {
      problem:
        "the request's Connection header names Content-Length, Transfer-Encoding or Host, which the origin needs to read it",
    };
  }
  const kept = fields.filter(([name]) => {
    const lower = name.toLowerCase();
    return FRAMING.has(lower) || (!HOP_BY_HOP.has(lower) && !named.has(lower));
  });
  return {
    hostHeader: hosts.length === 1 ? hosts[0][1] : null,
    body,
    forward: (hostLine) =>
      [
        `${method} ${path} ${version}`,
        ...(hosts.length === 1 ? [] : [hostLine]),
        ...kept.map(([name, value]) => `${name}: ${value}`),
        "Connection: close",
        "",
        "",
      ].join("\r\n"),
  };
}

/**
 * Whether a Host header names the request's target: the same host in its one spelling, and the
 * same port (80 when it gives none).
 */
export function hostHeaderMatches(
  value: string,
  to: { host: CanonicalHost; port: number },
): boolean {
  const { host: target, port } = to;
  const authority = splitAuthority(value);
  if (authority === null) return false;
  const host = canonicalHost(authority.host);
  if ("problem" in host) return false;
  return host.kind === target.kind && host.host === target.host && (authority.port ?? 80) === port;
}

/** `host`, `host:port`, `[v6]` or `[v6]:port`; no userinfo. Null if it is none of them. */
function splitAuthority(text: string): { host: string; port: number | null } | null {
  if (text === "" || text.includes("@")) return null;
  let host = text;
  let port: string | null = null;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close === -1) return null;
    host = text.slice(0, close + 1);
    const rest = text.slice(close + 1);
    if (rest !== "") {
      if (!rest.startsWith(":")) return null;
      port = rest.slice(1);
    }
  } else {
    const colon = text.lastIndexOf(":");
    if (colon !== -1) {
      host = text.slice(0, colon);
      port = text.slice(colon + 1);
      if (host.includes(":")) return null;
    }
  }
  if (port === null) return { host, port: null };
  if (!/^[0-9]{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) return null;
  return { host, port: Number(port) };
}

/** The Host line the proxy adds to a forwarded request that has none. */
export function hostLine(target: CanonicalHost, port: number): string {
  return `Host: ${hostText(target)}${port === 80 ? "" : `:${port}`}`;
}

/** A host as a client wrote it, safe to show and record: printable ASCII, at most 255 characters. */
export function shown(raw: string): string {
  return raw.replace(/[^\x20-\x7e]/g, "?").slice(0, 255);
}

/** The host a refusal records when the client named none (an empty host, a head with no target). */
export const NO_HOST = "(none)";

/**
 * A host as a refusal records it, never empty (the audit record needs a host): shown(raw), or
 * NO_HOST when the client named none.
 */
export function recordedHost(raw: string): string {
  const host = shown(raw);
  return host === "" ? NO_HOST : host;
}

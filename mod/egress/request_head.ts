/**
 * The head of an HTTP request to the proxy, read without I/O: `CONNECT host:port HTTP/1.1`, or
 * an absolute-form request (`GET http://host:port/path HTTP/1.1`) that the proxy forwards in
 * origin form with `Connection: close`. The head is read as Latin-1, one character a byte, so
 * what is forwarded is the bytes the client sent.
 */
import { type CanonicalHost, canonicalHost } from "../config/mod.ts";
import { type BodyFraming, bodyFraming } from "./request_body.ts";

/** A request head the proxy can act on, with its target's host as the client wrote it. */
export type RequestHead =
  | { kind: "connect"; host: string; port: number }
  | {
    kind: "absolute";
    host: string;
    port: number;
    /** The Host header's value, or null if the request has none. */
    hostHeader: string | null;
    /** The head to send the origin, in origin form, less its Host line if the request had none. */
    forward: (hostLine: string) => string;
    /** How the body that follows the head is framed (null: there is none). */
    body: BodyFraming;
  };

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

/** The index just past the `\r\n\r\n` that ends the head in `bytes`, or -1. */
export function headEnd(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (
      bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 && bytes[i - 3] === 13
    ) return i + 1;
  }
  return -1;
}

/** Parses a request head (the text up to and including the blank line), or says what is wrong. */
export function parseRequestHead(head: string): RequestHead | { problem: string } {
  const lines = head.split("\r\n");
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
  if (!/^[\x21-\x7e]+$/.test(path)) return { problem: "the URL's path is not printable ASCII" };
  const body = bodyFraming(fields);
  if (body !== null && "problem" in body) return body;
  const hosts = fields.filter(([name]) => name.toLowerCase() === "host");
  if (hosts.length > 1) return { problem: "the request has more than one Host header" };
  const named = new Set(
    fields.filter(([name]) => name.toLowerCase() === "connection")
      .flatMap(([, value]) => value.split(",").map((part) => part.trim().toLowerCase())),
  );
  const kept = fields.filter(([name]) => {
    const lower = name.toLowerCase();
    return !HOP_BY_HOP.has(lower) && !named.has(lower);
  });
  return {
    kind: "absolute",
    host: authority.host,
    port: authority.port ?? 80,
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

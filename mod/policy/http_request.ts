/**
 * The forms of `http.request` (docs/grants.md#httprequest): a request's method, host and path as
 * the server would read them, a grant's host, method and path patterns, and how they match. A path
 * that could climb out of a pattern (`.`, `..`, `//`, `\`, an encoded `.`, `/` or `\`) is refused,
 * not normalised; only percent-encoded unreserved characters are decoded (RFC 3986 6.2.2.2).
 */
import { hostMatches, hostPatternProblem, hostProblem, MAX_PATH_BYTES } from "./forms.ts";

const encoder = new TextEncoder();

/** An HTTP method: an uppercase letter, then uppercase letters, digits and `-`; 16 at most. */
const METHOD = /^[A-Z][A-Z0-9-]{0,15}$/;
/** A port other than 443, 1 to 65535, written without leading zeros. */
const PORT = /^[1-9][0-9]{0,4}$/;
/** Printable ASCII but space. */
const PRINTABLE = /^[\x21-\x7e]*$/;
/** RFC 3986 unreserved characters, the ones whose percent-encoding is decoded before matching. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** Why `method` is not an HTTP method token gurt takes, or null. */
export function methodProblem(method: string): string | null {
  if (METHOD.test(method)) return null;
  return "is not an uppercase HTTP method such as GET or POST (A-Z, 0-9 and -, at most 16)";
}

/** A host and its port (443 where none is written). */
type HostPort = { host: string; port: number };

function splitPort(value: string): HostPort | { problem: string } {
  const colon = value.lastIndexOf(":");
  if (colon === -1) return { host: value, port: 443 };
  const port = value.slice(colon + 1);
  if (!PORT.test(port) || Number(port) > 65535) {
    return { problem: "has a port that is not a number from 1 to 65535" };
  }
  if (port === "443") return { problem: "writes :443, which is the default: leave the port out" };
  return { host: value.slice(0, colon), port: Number(port) };
}

/** Why `value` is not a host name with an optional `:PORT` (not 443), or null. */
export function hostPortProblem(value: string): string | null {
  const split = splitPort(value);
  if ("problem" in split) return split.problem;
  return hostProblem(split.host);
}

/** Why `value` is not a host pattern (as for http_fetch) with an optional `:PORT`, or null. */
export function hostPortPatternProblem(value: string): string | null {
  const split = splitPort(value);
  if ("problem" in split) return split.problem;
  return hostPatternProblem(split.host);
}

/** Whether a valid `host[:port]` matches a valid pattern: the same port, and the host as hostMatches. */
export function hostPortMatches(value: string, pattern: string): boolean {
  const a = splitPort(value);
  const b = splitPort(pattern);
  if ("problem" in a || "problem" in b) return false;
  return a.port === b.port && hostMatches(a.host, b.host);
}

/** A request path's form: its normalised text and segments, or why it is refused. */
export type RequestPath = { path: string; segments: string[] } | { problem: string };

/**
 * Checks and normalises a request's path (without query): `/` then printable ASCII, at most 4,096
 * bytes, no `?`, `#` or `\`, every `%` followed by two hex digits. An encoded `.`, `/` or `\`
 * (%2e, %2f, %5c) is refused; other encoded unreserved characters are decoded; every other
 * encoding is kept with uppercase hex. After that no segment may be empty, `.` or `..` (`/` alone
 * is the root, with no segment).
 */
export function requestPath(path: string): RequestPath {
  const form = pathFormProblem(path);
  if (form !== null) return { problem: form };
  let out = "";
  for (let i = 0; i < path.length; i++) {
    const char = path[i];
    if (char !== "%") {
      out += char;
      continue;
    }
    const hex = path.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) {
      return { problem: "has a % that is not followed by two hex digits" };
    }
    const decoded = String.fromCharCode(parseInt(hex, 16));
    if (decoded === "." || decoded === "/" || decoded === "\\") {
      return { problem: `encodes ${JSON.stringify(decoded)} as %${hex}, which could climb paths` };
    }
    out += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`;
    i += 2;
  }
  const segments = segmentsOf(out);
  if ("problem" in segments) return segments;
  return { path: out, segments: segments.list };
}

/**
 * Why `pattern` is not a path pattern, or null: the form of a request path, written as
 * requestPath would leave it (unreserved characters plain, other encodings uppercase, none of
 * %2E %2F %5C), `*` and `**` only as whole segments, `**` only as the last.
 */
export function pathPatternProblem(pattern: string): string | null {
  const parsed = requestPath(pattern);
  if ("problem" in parsed) return parsed.problem;
  if (parsed.path !== pattern) {
    return `is not written plainly: write it as ${JSON.stringify(parsed.path)}`;
  }
  const { segments } = parsed;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if (segment === "**" && i !== segments.length - 1) return "has ** before its last segment";
    if (segment.includes("*") && segment !== "*" && segment !== "**") {
      return `has the segment ${JSON.stringify(segment)}: * and ** stand alone as a segment`;
    }
  }
  return null;
}

/**
 * Whether a request path's segments match a valid pattern, by whole segments: a literal matches
 * itself, `*` exactly one segment, a last `**` zero or more.
 */
export function pathPatternMatches(segments: readonly string[], pattern: string): boolean {
  const parts = pattern === "/" ? [] : pattern.slice(1).split("/");
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === "**") return true;
    if (i >= segments.length) return false;
    if (parts[i] !== "*" && parts[i] !== segments[i]) return false;
  }
  return parts.length === segments.length;
}

/** The segments of a normalised path (`/` has none). */
export function pathSegments(path: string): string[] {
  return path === "/" ? [] : path.slice(1).split("/");
}

function pathFormProblem(path: string): string | null {
  if (!path.startsWith("/")) return "does not start with /";
  if (encoder.encode(path).length > MAX_PATH_BYTES) return "is longer than 4,096 bytes";
  if (!PRINTABLE.test(path)) return "has a space or a character outside printable ASCII";
  if (path.includes("\\")) return "has a backslash";
  if (path.includes("?") || path.includes("#")) return "has a ? or #: give the path without query";
  return null;
}

function segmentsOf(path: string): { list: string[] } | { problem: string } {
  const list = pathSegments(path);
  for (const segment of list) {
    if (segment === "") return { problem: "has an empty segment (// or a trailing /)" };
    if (segment === "." || segment === "..") return { problem: `has a ${segment} segment` };
  }
  return { list };
}

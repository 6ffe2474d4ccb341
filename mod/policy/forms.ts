/**
 * The forms of docs/grants.md#paths-hosts-and-urls: what a valid path, host name, host pattern and
 * URL look like, and how a path lies inside another and a host matches a pattern. Nothing here
 * normalises: values are compared exactly as given.
 */

const encoder = new TextEncoder();

/** The longest path, in UTF-8 bytes. */
export const MAX_PATH_BYTES = 4096;
/** The longest URL, in bytes. */
export const MAX_URL_BYTES = 2048;
/** The longest host name, in bytes. */
export const MAX_HOST_BYTES = 253;

/**
 * Why `path` is not a valid absolute path, or null when it is: it starts with /, is at most 4,096
 * bytes, holds no NUL, and has no empty, `.` or `..` component (`/` alone is valid).
 */
export function pathProblem(path: string): string | null {
  if (!path.startsWith("/")) return "is not absolute (it must start with /)";
  if (encoder.encode(path).length > MAX_PATH_BYTES) return "is longer than 4,096 bytes";
  if (path.includes("\0")) return "contains a NUL character";
  if (path === "/") return null;
  const components = path.slice(1).split("/");
  for (const component of components) {
    if (component === "") return "has an empty component (// or a trailing /)";
    if (component === ".") return "has a . component";
    if (component === "..") return "has a .. component";
  }
  return null;
}

/** Whether `path` is `dir` itself or lies under it, by whole components. Both must be valid. */
export function pathInside(path: string, dir: string): boolean {
  if (dir === "/") return true;
  return path === dir || (path.startsWith(dir) && path.charCodeAt(dir.length) === 0x2f);
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Why `host` is not a valid host name, or null: 1 to 253 bytes, lowercase, two or more labels of
 * [a-z0-9-] (1 to 63 bytes, no - at either end), the last starting with a letter.
 */
export function hostProblem(host: string): string | null {
  if (host.length === 0 || host.length > MAX_HOST_BYTES) {
    return "must be 1 to 253 bytes";
  }
  const labels = host.split(".");
  if (labels.length < 2) return "must have at least two labels, such as example.com";
  for (const label of labels) {
    if (!LABEL.test(label)) {
      return `has the label ${JSON.stringify(label)}, which is not 1 to 63 characters of ` +
        "lowercase a-z, 0-9 and - (not at either end)";
    }
  }
  const last = labels[labels.length - 1];
  if (!/^[a-z]/.test(last)) {
    return "must end in a label that starts with a letter (IP addresses are not host names)";
  }
  return null;
}

/** Why `pattern` is not a valid host pattern (a host name, or `*.` and a host name), or null. */
export function hostPatternProblem(pattern: string): string | null {
  return hostProblem(pattern.startsWith("*.") ? pattern.slice(2) : pattern);
}

/** Whether a valid host matches a valid pattern: exactly, or under `*.` by one or more labels. */
export function hostMatches(host: string, pattern: string): boolean {
  if (!pattern.startsWith("*.")) return host === pattern;
  const suffix = pattern.slice(1);
  return host.length > suffix.length && host.endsWith(suffix);
}

/** A URL's parts, once it has passed the form check. */
export type UrlForm = { host: string };

const PRINTABLE_REST = /^[\x21-\x7e]*$/;

/**
 * Parses a URL of http_fetch's form: at most 2,048 bytes, `https://`, a host name, no userinfo, no
 * port but 443, then optionally `/`, `?` or `#` and printable ASCII without spaces. Returns the
 * host, or a problem.
 */
export function parseUrl(url: string): UrlForm | { problem: string } {
  if (encoder.encode(url).length > MAX_URL_BYTES) return { problem: "is longer than 2,048 bytes" };
  if (!url.startsWith("https://")) return { problem: "does not start with https://" };
  const afterScheme = url.slice("https://".length);
  const end = afterScheme.search(/[/?#]/);
  const authority = end === -1 ? afterScheme : afterScheme.slice(0, end);
  const rest = end === -1 ? "" : afterScheme.slice(end);
  if (authority.includes("@")) return { problem: "has userinfo (an @ before the path)" };
  let host = authority;
  const colon = authority.indexOf(":");
  if (colon !== -1) {
    if (authority.slice(colon + 1) !== "443") return { problem: "has a port other than 443" };
    host = authority.slice(0, colon);
  }
  const problem = hostProblem(host);
  if (problem !== null) return { problem: `has a host that ${problem}` };
  if (!PRINTABLE_REST.test(rest)) {
    return { problem: "has a space or a character outside printable ASCII after the host" };
  }
  return { host };
}

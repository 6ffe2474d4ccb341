/**
 * Finds a task's placeholder in one HTTPS request on an intercepted tunnel, and puts the vault's
 * value in its place (docs/credentials.md#how-a-request-is-read). Strict by design: the placeholder
 * counts only whole, exactly once, in the one place its rule names, on the rule's own host and port;
 * anywhere else it is `stray` and the request is not a candidate. Pure: no I/O, no clock.
 */
import type { CredentialRule } from "./rule_file.ts";

/** A rule given to a task, with the placeholder the task holds for it. */
export type OfferedCredential = { readonly rule: CredentialRule; readonly placeholder: string };

/** A request as the proxy read it: the request target (origin form or absolute) and headers. */
export type CredentialRequest = { method: string; url: string; headers: Headers };

/** The host and port the task's tunnel was opened to. */
export type TunnelTarget = { host: string; port: number };

/**
 * What a request carries: the offered credential whose placeholder is in its rule's place, or null;
 * and `stray`, whether an offered placeholder appears anywhere else (then the request is not a
 * candidate and nothing in it is ever replaced).
 */
export type CredentialFinding = { credential: OfferedCredential | null; stray: boolean };

/** The request with the value in place: headers and request target, the rest untouched. */
export type AppliedCredential = { url: string; headers: Headers };

/** Where a placeholder was found. */
type Place =
  | { kind: "header"; name: string }
  | { kind: "basic" }
  | { kind: "query"; index: number };

/** Finds the offered credential this request carries for `target`, and whether any is stray. */
export function findCredential(
  request: CredentialRequest,
  options: { target: TunnelTarget; offered: readonly OfferedCredential[] },
): CredentialFinding {
  const { target, offered } = options;
  let found: { credential: OfferedCredential; place: Place } | null = null;
  if (addressesTarget(request, target)) {
    for (const credential of offered) {
      if (!forTarget(credential.rule, target)) continue;
      const place = locate(request, credential);
      if (place !== null) {
        found = { credential, place };
        break;
      }
    }
  }
  const views = viewsOf(request, found);
  const stray = offered.some((credential) => {
    const wanted = credential.placeholder.toLowerCase();
    return views.some((view) => view.includes(wanted));
  });
  return { credential: found?.credential ?? null, stray };
}

/**
 * The request with `value` in the place of `credential`'s placeholder. Throws when the request is
 * not a candidate for that credential (findCredential would not say so), and when the value cannot
 * go in a request; the message never holds the value.
 */
export function applyCredential(
  request: CredentialRequest,
  options: {
    target: TunnelTarget;
    offered: readonly OfferedCredential[];
    credential: OfferedCredential;
    value: string;
  },
): AppliedCredential {
  const { credential, value } = options;
  const finding = findCredential(request, options);
  if (finding.stray || finding.credential !== credential) {
    throw new Error(
      `the request does not carry the placeholder of the credential rule ${credential.rule.id} ` +
        "in its place alone; it is not a candidate and nothing in it is replaced",
    );
  }
  if (value === "" || hasControl(value)) {
    throw new Error(
      `the vault value of ${credential.rule.secret} is empty or holds a control character, ` +
        `so it cannot go in a request for the credential rule ${credential.rule.id}`,
    );
  }
  const place = locate(request, credential)!;
  const headers = new Headers(request.headers);
  const placement = credential.rule.placement;
  if (place.kind === "header" && placement.kind === "header") {
    headers.set(placement.name, placement.format.replace("{}", value));
    return { url: request.url, headers };
  }
  if (place.kind === "basic" && placement.kind === "basic") {
    headers.set("authorization", `Basic ${base64(`${placement.user}:${value}`)}`);
    return { url: request.url, headers };
  }
  if (place.kind === "query" && placement.kind === "query") {
    const { path, params } = splitQuery(request.url)!;
    const replaced = params.map((param, index) =>
      index === place.index ? `${placement.parameter}=${encodeURIComponent(value)}` : param
    );
    return { url: `${path}?${replaced.join("&")}`, headers };
  }
  throw new Error(`the credential rule ${credential.rule.id} changed its placement`);
}

/** Whether `text` holds a control character (below space, or DEL). */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** Whether the rule is for this tunnel's host and port exactly. */
function forTarget(rule: CredentialRule, target: TunnelTarget): boolean {
  return rule.host === canonical(target.host) && rule.port === target.port;
}

/** A host name as compared: lower case, without its one trailing dot. */
function canonical(host: string): string {
  const lower = host.toLowerCase();
  return lower.endsWith(".") ? lower.slice(0, -1) : lower;
}

/**
 * Whether the request names the tunnel's target: an absolute target is https to that host and
 * port, an origin-form target starts with /, and a Host header (when there is one) names it.
 */
function addressesTarget(request: CredentialRequest, target: TunnelTarget): boolean {
  const host = canonical(target.host);
  if (request.url.includes("#")) return false;
  if (!request.url.startsWith("/")) {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return false;
    }
    const port = url.port === "" ? 443 : Number(url.port);
    if (url.protocol !== "https:" || canonical(url.hostname) !== host || port !== target.port) {
      return false;
    }
    if (url.username !== "" || url.password !== "") return false;
  }
  const named = request.headers.get("host");
  if (named === null) return true;
  const withPort = `${host}:${target.port}`;
  const given = named.toLowerCase();
  return given === withPort || (target.port === 443 && canonical(given) === host);
}

/** Where `credential`'s placeholder is in its rule's place, exactly once and whole, or null. */
function locate(request: CredentialRequest, credential: OfferedCredential): Place | null {
  const { placement } = credential.rule;
  const placeholder = credential.placeholder;
  if (placement.kind === "header") {
    const value = request.headers.get(placement.name);
    // Headers joins repeated headers with ", ": a list, or two of them, is never read as one.
    if (value === null || value.includes(",")) return null;
    return wholeOnce(value, placeholder) ? { kind: "header", name: placement.name } : null;
  }
  if (placement.kind === "basic") {
    const pair = basicPair(request.headers.get("authorization"));
    if (pair === null) return null;
    const [user, password] = pair;
    if (password === placeholder && !user.includes(placeholder)) return { kind: "basic" };
    if (user === placeholder && !password.includes(placeholder)) return { kind: "basic" };
    return null;
  }
  const split = splitQuery(request.url);
  if (split === null) return null;
  const named = split.params.flatMap((param, index) =>
    param.split("=")[0] === placement.parameter ? [index] : []
  );
  if (named.length !== 1) return null;
  const param = split.params[named[0]];
  return param === `${placement.parameter}=${placeholder}`
    ? { kind: "query", index: named[0] }
    : null;
}

/** Whether `placeholder` is in `text` once, with no letter, digit or - touching either end. */
function wholeOnce(text: string, placeholder: string): boolean {
  const first = text.indexOf(placeholder);
  if (first === -1 || text.indexOf(placeholder, first + 1) !== -1) return false;
  const before = first === 0 ? "" : text[first - 1];
  const after = text.slice(first + placeholder.length, first + placeholder.length + 1);
  return !/[A-Za-z0-9-]/.test(before) && !/[A-Za-z0-9-]/.test(after);
}

/** The user and password of `Basic <base64>`, strictly: canonical padded base64 of UTF-8. */
function basicPair(value: string | null): [string, string] | null {
  if (value === null) return null;
  const match = /^basic ([A-Za-z0-9+/]+={0,2})$/i.exec(value);
  if (match === null || match[1].length % 4 !== 0) return null;
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(match[1]), (char) => char.charCodeAt(0));
  } catch {
    return null;
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  if (base64(text) !== match[1]) return null;
  const colon = text.indexOf(":");
  if (colon === -1) return null;
  return [text.slice(0, colon), text.slice(colon + 1)];
}

/** The path and the `&`-separated parameters of a request target with a query, or null. */
function splitQuery(url: string): { path: string; params: string[] } | null {
  const mark = url.indexOf("?");
  if (mark === -1 || url.includes("#")) return null;
  return { path: url.slice(0, mark), params: url.slice(mark + 1).split("&") };
}

/**
 * Every text a placeholder could hide in, lower-cased, with the found place left out: the method,
 * the target as written and percent-decoded, each header's name and value, and whatever base64 in
 * a header value decodes to (Basic and any other).
 */
function viewsOf(
  request: CredentialRequest,
  found: { credential: OfferedCredential; place: Place } | null,
): string[] {
  const place = found?.place ?? null;
  let url = request.url;
  if (place?.kind === "query") {
    const { path, params } = splitQuery(url)!;
    url = `${path}?${params.filter((_, index) => index !== place.index).join("&")}`;
  }
  const views = [request.method, url, percentDecoded(url)];
  for (let [name, value] of request.headers) {
    if (found !== null && place?.kind === "header" && name === place.name.toLowerCase()) {
      // The found placeholder is taken out; what is left of the value is scanned as any other.
      value = value.replace(found.credential.placeholder, "");
    } else if (found !== null && place?.kind === "basic" && name === "authorization") {
      const pair = basicPair(value)!;
      views.push(pair.filter((part) => part !== found.credential.placeholder).join(":"));
      continue;
    }
    views.push(name, value, percentDecoded(value));
    for (const token of value.match(/[A-Za-z0-9+/_-]{16,}={0,2}/g) ?? []) {
      const decoded = looseBase64(token);
      if (decoded !== null) views.push(decoded);
    }
  }
  return views.map((view) => view.toLowerCase());
}

/** `text` with %XX decoded, again until it no longer changes (three rounds at most). */
function percentDecoded(text: string): string {
  let current = text;
  for (let round = 0; round < 3; round++) {
    const next = current.replace(
      /%([0-9a-fA-F]{2})/g,
      (_, hex: string) => String.fromCharCode(parseInt(hex, 16)),
    );
    if (next === current) break;
    current = next;
  }
  return current;
}

/** What `token` decodes to as base64 or base64url, padded or not, as Latin-1; null if it does not. */
function looseBase64(token: string): string | null {
  let standard = token.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "");
  while (standard.length % 4 !== 0) standard += "=";
  try {
    return atob(standard);
  } catch {
    return null;
  }
}

/** Base64 of `text`'s UTF-8 bytes. */
function base64(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

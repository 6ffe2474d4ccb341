/**
 * The egress proxy's host grammar, shared by gurt.toml's [egress] (which validates with it) and
 * the proxy (which matches every target with it): one canonical spelling of a host, and the host
 * list's entries (`a.example`, `*.npmjs.org`, `b.example:8443`, `10.0.0.5:8080`,
 * `[2001:db8::1]:443`). A host name is lower case, without its one trailing dot, in IDNA's ASCII
 * form; an IP address has one spelling (IPv4 as four decimal numbers, IPv6 as the URL standard
 * writes it), and every other spelling of an address (`2130706433`, `0x7f.1`, `0177.0.0.1`,
 * `[::ffff:127.0.0.1]`) is refused, never read as the address it could mean. Pure; imports
 * nothing, so gurt.toml's schema can use it.
 */

/** A host in its one spelling: a name, or an IP address (IPv6 without brackets). */
export type CanonicalHost =
  | { kind: "name"; host: string }
  | { kind: "ip"; host: string; family: 4 | 6 };

/** Why a host cannot be used; `address` when it is an address spelt in an unusual way. */
export interface HostProblem {
  problem: string;
  address: boolean;
}

/** One entry of a host list, canonical. */
export interface HostEntry {
  kind: "name" | "ip";
  /** The name, the suffix after `*.` for a wildcard, or the address. */
  host: string;
  /** `*.x.y`: any name under x.y, not x.y itself. */
  wildcard: boolean;
  /** The ports allowed: the one given, else 443 and 80. */
  ports: readonly number[];
}

/** The ports an entry without a port allows. */
export const DEFAULT_PORTS: readonly number[] = [443, 80];

const V4_PART = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
const CANONICAL_V4 = new RegExp(`^${V4_PART}(\\.${V4_PART}){3}$`);
/** What a host may hold before IDNA: ASCII letters, digits, `.`, `-`, `_`, and any non-ASCII. */
const RAW_NAME = /^[a-z0-9._\-\u0080-\uffff]+$/;
const ASCII_NAME = /^[a-z0-9_-]{1,63}(\.[a-z0-9_-]{1,63})*$/;

/** The one spelling of `raw` (from a request, a SOCKS request or a list), or why it has none. */
export function canonicalHost(raw: string): CanonicalHost | HostProblem {
  if (raw === "") return { problem: "is empty", address: false };
  if (raw.length > 260) return { problem: "is longer than 253 characters", address: false };
  if (raw.startsWith("[") || raw.includes(":")) {
    const inner = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw;
    return canonicalV6(inner);
  }
  let host = raw.toLowerCase();
  if (host.endsWith(".")) host = host.slice(0, -1);
  if (!RAW_NAME.test(host)) {
    return { problem: "has a character that a host name may not hold", address: false };
  }
  if (endsInNumber(host)) return canonicalV4(host);
  let ascii: string;
  try {
    ascii = new URL(`http://${host}/`).hostname;
  } catch {
    return { problem: "is not a valid host name", address: false };
  }
  // IDNA maps some characters onto digits and dots (fullwidth `１２７．０．０．１`): an odd spelling.
  if (endsInNumber(ascii)) {
    return { problem: "is an IP address spelt in an unusual way", address: true };
  }
  if (ascii.length > 253 || !ASCII_NAME.test(ascii)) {
    return { problem: "is not a valid host name", address: false };
  }
  return { kind: "name", host: ascii };
}

/** `host` as written in a request or a message: a name or IPv4 as it is, IPv6 in brackets. */
export function hostText(host: CanonicalHost): string {
  return host.kind === "ip" && host.family === 6 ? `[${host.host}]` : host.host;
}

/**
 * Parses one host-list entry: a host name, `*.` and a host name, or an IP address, then
 * optionally `:port` (an IPv6 address in brackets). Returns the entry, or a sentence saying what
 * is wrong with it.
 */
export function parseHostEntry(entry: string): HostEntry | { problem: string } {
  let hostPart = entry;
  let portPart: string | null = null;
  if (entry.startsWith("[")) {
    const close = entry.indexOf("]");
    if (close === -1) return { problem: "opens an IPv6 address with [ but never closes it" };
    hostPart = entry.slice(0, close + 1);
    const rest = entry.slice(close + 1);
    if (rest !== "") {
      if (!rest.startsWith(":")) return { problem: "has something after ] that is not :port" };
      portPart = rest.slice(1);
    }
  } else {
    const colons = entry.split(":").length - 1;
    if (colons > 1) {
      return { problem: "is an IPv6 address without brackets; write it as [2001:db8::1]:443" };
    }
    if (colons === 1) {
      hostPart = entry.slice(0, entry.indexOf(":"));
      portPart = entry.slice(entry.indexOf(":") + 1);
    }
  }
  let ports = DEFAULT_PORTS;
  if (portPart !== null) {
    if (!/^[1-9][0-9]{0,4}$/.test(portPart) || Number(portPart) > 65535) {
      return { problem: "has a port that is not a number from 1 to 65535" };
    }
    ports = [Number(portPart)];
  }
  const wildcard = hostPart.startsWith("*.");
  const host = canonicalHost(wildcard ? hostPart.slice(2) : hostPart);
  if ("problem" in host) {
    return {
      problem: host.address
        ? "is an IP address spelt in an unusual way; write IPv4 as four decimal numbers (10.0.0.5) and IPv6 in brackets ([2001:db8::1])"
        : `has a host that ${host.problem} (a host is a name such as a.example, *. and a name, or an IP address)`,
    };
  }
  if (wildcard && host.kind === "ip") return { problem: "puts *. before an IP address" };
  return { kind: host.kind, host: host.host, wildcard, ports };
}

/** Why `entry` is not a host-list entry, or null. */
export function hostEntryProblem(entry: string): string | null {
  const parsed = parseHostEntry(entry);
  return "problem" in parsed ? parsed.problem : null;
}

/** Whether `entry` allows `host` on `port`; `*.x.y` matches names under x.y, not x.y itself. */
export function entryMatches(
  entry: HostEntry,
  target: { host: CanonicalHost; port: number },
): boolean {
  const { host, port } = target;
  if (entry.kind !== host.kind || !entry.ports.includes(port)) return false;
  if (!entry.wildcard) return entry.host === host.host;
  return host.host.endsWith(`.${entry.host}`);
}

/** The URL standard's test: the last label is all digits or 0x and hex digits. */
function endsInNumber(host: string): boolean {
  const labels = host.split(".");
  const last = labels[labels.length - 1] === "" && labels.length > 1
    ? labels[labels.length - 2]
    : labels[labels.length - 1];
  return /^[0-9]+$/.test(last) || /^0x[0-9a-f]*$/i.test(last);
}

function canonicalV4(host: string): CanonicalHost | HostProblem {
  if (CANONICAL_V4.test(host)) return { kind: "ip", host, family: 4 };
  return { problem: "is an IP address spelt in an unusual way", address: true };
}

function canonicalV6(inner: string): CanonicalHost | HostProblem {
  const odd = { problem: "is an IP address spelt in an unusual way", address: true };
  if (!/^[0-9a-fA-F:.]+$/.test(inner)) return odd;
  let host: string;
  try {
    host = new URL(`http://[${inner}]/`).hostname.slice(1, -1);
  } catch {
    return odd;
  }
  const words = v6Words(host);
  const [a, b, c, d, e, f, g, h] = words;
  const zeros = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  // An IPv4 address carried in IPv6 (mapped, compatible, NAT64) is spelt as IPv4 or not at all.
  if (zeros && f === 0xffff) return odd;
  if (zeros && f === 0 && (g !== 0 || h > 1)) return odd;
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return odd;
  return { kind: "ip", host, family: 6 };
}

/** The eight words of an IPv6 address as the URL standard writes it (hex, `::` once at most). */
function v6Words(host: string): number[] {
  const [head, tail] = host.includes("::") ? host.split("::") : [host, null];
  const front = head === "" ? [] : head.split(":").map((word) => parseInt(word, 16));
  if (tail === null) return front;
  const back = tail === "" ? [] : tail.split(":").map((word) => parseInt(word, 16));
  return [...front, ...new Array(8 - front.length - back.length).fill(0), ...back];
}

/**
 * What a task's egress proxy allows, decided without I/O: whether a target is on the task's host
 * list, which addresses a name maps to before DNS, whether a host may reach private addresses, and
 * whether the addresses a host resolved to may be dialled. The proxy reads the policy afresh for
 * every connection, so a host the owner approves later counts from the next one.
 */
import {
  type CanonicalHost,
  canonicalHost,
  entryMatches,
  type HostEntry,
  parseHostEntry,
} from "../config/mod.ts";
import { isOwnAddress, isRestrictedAddress } from "../runtime/mod.ts";

/** A task's egress policy, as the proxy reads it for each connection. */
export interface EgressPolicy {
  /** The task's host list and gurt.toml's [egress] hosts: `a.example`, `*.x.y`, `b.example:8443`. */
  hosts: readonly string[];
  /** Hosts that may resolve to loopback, private, link-local or the box's own addresses. */
  allowPrivate: readonly string[];
  /** Names mapped to addresses before DNS is asked, as curl's --resolve does. */
  resolve: Readonly<Record<string, string>>;
  /** A host on no list: refused, or held while the owner is asked. */
  unknown: "deny" | "ask";
}

/** Why the proxy refused a connection; the `reason` of a net.blocked event. */
export type BlockReason =
  | "not_listed"
  | "private_address"
  | "own_address"
  | "ip_literal"
  | "host_mismatch"
  | "sni_mismatch"
  | "no_sni"
  | "not_tls"
  | "resolve_failed"
  | "bad_request"
  | "credential_plain_http";

/**
 * The cloud metadata services' addresses: refused even for a host in allowPrivate, since they hand
 * out the machine's own credentials to whoever asks.
 */
export const METADATA_ADDRESSES: readonly string[] = ["169.254.169.254", "fd00:ec2::254"];

/** Whether `host` on `port` is on the policy's host list. Entries that do not parse match nothing. */
export function isListed(
  policy: EgressPolicy,
  target: { host: CanonicalHost; port: number },
): boolean {
  return entriesOf(policy.hosts).some((entry) => entryMatches(entry, target));
}

/** Whether the policy lets `host` reach private addresses (its allowPrivate names it, any port). */
export function privateAllowed(policy: EgressPolicy, host: CanonicalHost): boolean {
  return entriesOf(policy.allowPrivate).some((entry) =>
    entryMatches({ ...entry, ports: [0] }, { host, port: 0 })
  );
}

/** The address the policy's resolve map gives a name, canonical, or null. */
export function resolvedByPolicy(policy: EgressPolicy, host: CanonicalHost): string | null {
  if (host.kind !== "name") return null;
  for (const [name, address] of Object.entries(policy.resolve)) {
    const key = canonicalHost(name);
    const value = canonicalHost(address);
    if ("problem" in key || "problem" in value || value.kind !== "ip") continue;
    if (key.kind === "name" && key.host === host.host) return value.host;
  }
  return null;
}

/**
 * Why the proxy will not dial any of `addresses`, or null if it may dial each of them: a metadata
 * address always, else unless `privateOk`, a loopback, private, link-local or reserved address
 * (private_address) or one of the box's own (own_address, `own` null when they could not be read).
 */
export function addressRefusal(
  addresses: readonly string[],
  options: { own: readonly string[] | null; privateOk: boolean },
): "private_address" | "own_address" | null {
  const { own, privateOk } = options;
  if (addresses.length === 0) return "private_address";
  if (addresses.some((address) => isOwnAddress(address, METADATA_ADDRESSES))) {
    return "private_address";
  }
  if (privateOk) return null;
  if (addresses.some((address) => isRestrictedAddress(address))) return "private_address";
  if (own === null || addresses.some((address) => isOwnAddress(address, own))) {
    return "own_address";
  }
  return null;
}

function entriesOf(list: readonly string[]): HostEntry[] {
  const entries: HostEntry[] = [];
  for (const text of list) {
    const entry = parseHostEntry(text);
    if (!("problem" in entry)) entries.push(entry);
  }
  return entries;
}

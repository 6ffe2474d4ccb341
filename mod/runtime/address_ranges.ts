/**
 * Which IP addresses http_fetch will not reach unless the owner allows the host: loopback,
 * private, link-local, unique-local, and the other ranges that name this box or its own network
 * (unspecified, shared address space, multicast, reserved). IPv4 inside IPv6 (mapped, NAT64) is
 * judged as the IPv4 address it carries. And whether an address is one of the box's own (any
 * interface's, which http_fetch reads at each fetch), in any spelling of it. Pure.
 */

/** The IPv4 ranges refused, as [first octets as a number, prefix length]. */
const V4_RANGES: readonly [string, number][] = [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // shared address space (carrier NAT, tailnets)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // protocol assignments
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
];

/** Whether `address` (an IPv4 or IPv6 literal) is one http_fetch refuses; true if it is not one. */
export function isRestrictedAddress(address: string): boolean {
  const v4 = parseV4(address);
  if (v4 !== null) return restrictedV4(v4);
  const v6 = parseV6(address);
  if (v6 === null) return true;
  const [a, b, c, d, e, f, g, h] = v6;
  if (v6.every((word) => word === 0)) return true; // unspecified
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0 && g === 0 && h === 1) {
    return true; // loopback
  }
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && (f === 0xffff || f === 0)) {
    return restrictedV4(((g << 16) | h) >>> 0); // IPv4-mapped and IPv4-compatible
  }
  if (a === 0x64 && b === 0xff9b) return restrictedV4(((g << 16) | h) >>> 0); // NAT64
  if ((a & 0xfe00) === 0xfc00) return true; // unique-local fc00::/7
  if ((a & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((a & 0xffc0) === 0xfec0) return true; // site-local fec0::/10 (deprecated)
  if ((a & 0xff00) === 0xff00) return true; // multicast
  return false;
}

/**
 * Whether `address` is one of `own` (the addresses assigned to the box's interfaces), however
 * either is spelled: an IPv4 address matches its IPv4-mapped, IPv4-compatible and NAT64 forms.
 */
export function isOwnAddress(address: string, own: readonly string[]): boolean {
  const key = addressKey(address);
  if (key === null) return false;
  return own.some((mine) => addressKey(mine) === key);
}

/**
 * An address in the one form it is compared in: IPv4, alone or carried in IPv6, as `v4:<number>`;
 * any other IPv6 as `v6:` and its eight words; null if it is not an address.
 */
function addressKey(address: string): string | null {
  const v4 = parseV4(address);
  if (v4 !== null) return `v4:${v4}`;
  const v6 = parseV6(address);
  if (v6 === null) return null;
  const [a, b, c, d, e, f, g, h] = v6;
  const carried = ((g << 16) | h) >>> 0;
  const zeros = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  const mapped = zeros && f === 0xffff;
  const compatible = zeros && f === 0 && carried > 1; // :: and ::1 are IPv6's own
  if (mapped || compatible || (a === 0x64 && b === 0xff9b)) return `v4:${carried}`;
  return `v6:${v6.join(":")}`;
}

function restrictedV4(value: number): boolean {
  for (const [base, prefix] of V4_RANGES) {
    const start = parseV4(base)!;
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    if (((value & mask) >>> 0) === ((start & mask) >>> 0)) return true;
  }
  return false;
}

/** A dotted-quad IPv4 address as a 32-bit number, or null. */
function parseV4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

/** An IPv6 address as eight 16-bit words, or null; a zone (`%eth0`) is ignored. */
function parseV6(text: string): number[] | null {
  let rest = text.replace(/%.*$/, "").toLowerCase();
  const lastColon = rest.lastIndexOf(":");
  if (lastColon === -1) return null;
  const tailV4 = parseV4(rest.slice(lastColon + 1));
  if (tailV4 !== null) {
    const high = (tailV4 >>> 16).toString(16);
    const low = (tailV4 & 0xffff).toString(16);
    rest = `${rest.slice(0, lastColon + 1)}${high}:${low}`;
  }
  const halves = rest.split("::");
  if (halves.length > 2) return null;
  const head = words(halves[0]);
  const back = halves.length === 2 ? words(halves[1]) : [];
  if (head === null || back === null) return null;
  const total = head.length + back.length;
  if (halves.length === 1) return total === 8 ? head : null;
  if (total > 7) return null;
  return [...head, ...new Array(8 - total).fill(0), ...back];
}

function words(half: string): number[] | null {
  if (half === "") return [];
  const out: number[] = [];
  for (const word of half.split(":")) {
    if (!/^[0-9a-f]{1,4}$/.test(word)) return null;
    out.push(parseInt(word, 16));
  }
  return out;
}

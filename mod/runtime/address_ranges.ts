/**
 * Which IP addresses http_fetch will not reach unless the owner allows the host: loopback,
 * private, link-local, unique-local, and the other ranges that name this box or its own network
 * (unspecified, shared address space, multicast, reserved). An IPv6 address that carries IPv4
 * (mapped, compatible, translated, NAT64, 6to4, Teredo) is judged as the IPv4 it carries, and
 * refused if any is; the local-use NAT64 prefix is refused whole. And whether an address is one
 * of the box's own (any interface's, which http_fetch reads at each fetch), in any spelling of it.
 * Pure.
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
  // NAT64 outside its well-known 64:ff9b::/96: the local-use 64:ff9b:1::/48 (RFC 8215), whose
  // IPv4 sits where the local prefix length puts it, and the unassigned rest of 64:ff9b::/32.
  if (a === 0x64 && b === 0xff9b && (c !== 0 || d !== 0 || e !== 0 || f !== 0)) return true;
  const carried = carriedV4(v6);
  if (carried.length > 0) return carried.some((value) => restrictedV4(value));
  if ((a & 0xfe00) === 0xfc00) return true; // unique-local fc00::/7
  if ((a & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((a & 0xffc0) === 0xfec0) return true; // site-local fec0::/10 (deprecated)
  if ((a & 0xff00) === 0xff00) return true; // multicast
  return false;
}

/**
 * The IPv4 addresses an IPv6 address carries, each a route to that IPv4 address: IPv4-mapped
 * (::ffff:0:0/96), IPv4-compatible (::/96 but :: and ::1), IPv4-translated (::ffff:0:0:0/96),
 * NAT64 (64:ff9b::/96), the last 32 bits each; 6to4 (2002::/16), bits 16 to 47; Teredo
 * (2001::/32), its server in bits 32 to 63 and its client in the last 32 bits inverted. Empty
 * for any other address.
 */
function carriedV4(v6: readonly number[]): number[] {
  const [a, b, c, d, e, f, g, h] = v6;
  const last = ((g << 16) | h) >>> 0;
  const zeros = a === 0 && b === 0 && c === 0 && d === 0;
  if (zeros && e === 0 && f === 0xffff) return [last]; // mapped
  if (zeros && e === 0 && f === 0 && last > 1) return [last]; // compatible
  if (zeros && e === 0xffff && f === 0) return [last]; // translated (SIIT)
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return [last];
  if (a === 0x2002) return [((b << 16) | c) >>> 0]; // 6to4
  if (a === 0x2001 && b === 0) return [((c << 16) | d) >>> 0, (last ^ 0xffffffff) >>> 0]; // Teredo
  return [];
}

/**
 * Whether `address` is one of `own` (the addresses assigned to the box's interfaces), however
 * either is spelled: an IPv4 address matches its IPv4-mapped, IPv4-compatible, translated and
 * NAT64 forms, and a 6to4 or Teredo address that carries it.
 */
export function isOwnAddress(address: string, own: readonly string[]): boolean {
  const key = addressKey(address);
  if (key === null) return false;
  return own.some((text) => {
    const mine = addressKey(text);
    if (mine === null) return false;
    return mine.key === key.key || key.carries.includes(mine.key) ||
      mine.carries.includes(key.key);
  });
}

/**
 * An address in the one form it is compared in, `key`: IPv4, alone or in a form that is only a
 * spelling of it (mapped, compatible, translated, NAT64), as `v4:<number>`; any other IPv6 as `v6:`
 * and its eight words, with the IPv4 addresses a 6to4 or Teredo address carries in `carries`; null
 * if it is not an address.
 */
function addressKey(address: string): { key: string; carries: string[] } | null {
  const v4 = parseV4(address);
  if (v4 !== null) return { key: `v4:${v4}`, carries: [] };
  const v6 = parseV6(address);
  if (v6 === null) return null;
  const carried = carriedV4(v6).map((value) => `v4:${value}`);
  if (v6[0] !== 0x2002 && v6[0] !== 0x2001 && carried.length === 1) {
    return { key: carried[0], carries: [] };
  }
  return { key: `v6:${v6.join(":")}`, carries: carried };
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

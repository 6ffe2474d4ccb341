/**
 * Properties of the address checks: every spelling of a refused IPv4 address is refused, and the
 * box's own addresses are recognised in every spelling.
 */
import fc from "fast-check";
import { assertEquals } from "../assert.ts";
import { isRestrictedAddress } from "../../mod/runtime/mod.ts";
import { isOwnAddress } from "../../mod/runtime/address_ranges.ts";

const octet = fc.integer({ min: 0, max: 255 });

Deno.test("an IPv4 address and its IPv4-mapped and NAT64 IPv6 forms are judged alike", () => {
  fc.assert(fc.property(fc.tuple(octet, octet, octet, octet), (parts) => {
    const dotted = parts.join(".");
    const hex = (a: number, b: number) => ((a << 8) | b).toString(16);
    const mapped = `::ffff:${hex(parts[0], parts[1])}:${hex(parts[2], parts[3])}`;
    const expected = isRestrictedAddress(dotted);
    assertEquals(isRestrictedAddress(`::ffff:${dotted}`), expected);
    assertEquals(isRestrictedAddress(mapped), expected);
    assertEquals(isRestrictedAddress(`64:ff9b::${dotted}`), expected);
  }));
});

Deno.test("every address in 10/8, 127/8, 169.254/16, 172.16/12 and 192.168/16 is refused", () => {
  const inRange = fc.oneof(
    fc.tuple(octet, octet, octet).map(([b, c, d]) => `10.${b}.${c}.${d}`),
    fc.tuple(octet, octet, octet).map(([b, c, d]) => `127.${b}.${c}.${d}`),
    fc.tuple(octet, octet).map(([c, d]) => `169.254.${c}.${d}`),
    fc.tuple(fc.integer({ min: 16, max: 31 }), octet, octet).map(([b, c, d]) =>
      `172.${b}.${c}.${d}`
    ),
    fc.tuple(octet, octet).map(([c, d]) => `192.168.${c}.${d}`),
  );
  fc.assert(fc.property(inRange, (address) => isRestrictedAddress(address)));
});

Deno.test("fe80::/10 and fc00::/7 are refused in any spelling of their words", () => {
  const word = fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16));
  const tail = fc.array(word, { minLength: 7, maxLength: 7 });
  const lead = fc.oneof(
    fc.integer({ min: 0xfe80, max: 0xfebf }),
    fc.integer({ min: 0xfc00, max: 0xfdff }),
  );
  fc.assert(fc.property(lead, tail, fc.boolean(), (first, rest, upper) => {
    const text = [first.toString(16), ...rest].join(":");
    return isRestrictedAddress(upper ? text.toUpperCase() : text);
  }));
});

Deno.test("a box address matches itself in every spelling (IPv4 in mapped, compatible and NAT64 IPv6; IPv6 compressed or not, any case), and no other address", () => {
  fc.assert(fc.property(fc.tuple(octet, octet, octet, octet), (parts) => {
    const dotted = parts.join(".");
    const hex = (a: number, b: number) => ((a << 8) | b).toString(16);
    const words = `${hex(parts[0], parts[1])}:${hex(parts[2], parts[3])}`;
    const spellings = [dotted, `::ffff:${dotted}`, `::ffff:${words}`, `64:ff9b::${dotted}`];
    // IPv4-compatible, but for :: and ::1, which are IPv6's own.
    if (parts[0] + parts[1] + parts[2] > 0 || parts[3] > 1) spellings.push(`::${dotted}`);
    for (const spelled of spellings) {
      assertEquals(isOwnAddress(spelled, [dotted]), true, spelled);
      assertEquals(isOwnAddress(dotted, [spelled]), true, spelled);
    }
    const next = [...parts.slice(0, 3), (parts[3] + 1) % 256].join(".");
    assertEquals(isOwnAddress(next, [dotted]), false, next);
  }));
  const word = fc.integer({ min: 0, max: 0xffff });
  const v6 = fc.array(word, { minLength: 8, maxLength: 8 }).filter((w) => w[0] >= 0x2000);
  fc.assert(fc.property(v6, fc.boolean(), (w, upper) => {
    const full = w.map((n) => n.toString(16).padStart(4, "0")).join(":");
    const short = w.map((n) => n.toString(16)).join(":").replace(/(^|:)0(:0)+(:|$)/, "::");
    const spelled = upper ? short.toUpperCase() : short;
    assertEquals(isOwnAddress(spelled, [full]), true, `${spelled} ${full}`);
    const other = [...w.slice(0, 7), (w[7] + 1) % 0x10000];
    assertEquals(isOwnAddress(other.map((n) => n.toString(16)).join(":"), [full]), false);
  }));
  assertEquals(isOwnAddress("::1", ["0.0.0.1"]), false);
  assertEquals(isOwnAddress("not an address", ["not an address"]), false);
});

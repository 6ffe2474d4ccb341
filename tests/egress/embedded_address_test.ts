/**
 * Addresses that carry IPv4 inside IPv6 (issue 36): 6to4 (2002::/16), Teredo (2001::/32, its
 * client inverted in the last 32 bits, its server before it), NAT64 (64:ff9b::/96, and the
 * local-use 64:ff9b:1::/48), IPv4-mapped, -compatible and -translated. A listed name that resolves
 * to one is judged by the IPv4 it carries: refused when that IPv4 address is, the box's own when
 * it is the box's; the local-use NAT64 prefix is refused whole.
 */
import fc from "fast-check";
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { addressRefusal } from "../../mod/egress/host_policy.ts";
import { exchange, startProxy, text } from "./egress_kit.ts";

const octet = fc.integer({ min: 0, max: 255 });
const word = fc.integer({ min: 0, max: 0xffff });

/** The IPv4 address `parts` as a 32-bit number's two words, in hex. */
function words(parts: readonly number[]): [string, string] {
  return [(parts[0] << 8) | parts[1], (parts[2] << 8) | parts[3]].map((n) => n.toString(16)) as [
    string,
    string,
  ];
}

/** The IPv6 forms that carry the IPv4 address `parts`, the rest of their bits from `rest`. */
function carriers(parts: readonly number[], rest: readonly number[]): Record<string, string> {
  const [high, low] = words(parts);
  const inverted = words(parts.map((part) => part ^ 0xff));
  const hex = rest.map((n) => n.toString(16));
  return {
    "6to4": `2002:${high}:${low}:${hex[0]}:${hex[1]}:${hex[2]}:${hex[3]}:${hex[4]}`,
    "Teredo client": `2001:0:808:808:${hex[0]}:${hex[1]}:${inverted[0]}:${inverted[1]}`,
    "Teredo server": `2001:0:${high}:${low}:${hex[0]}:${hex[1]}:f7f7:f7f7`,
    "NAT64": `64:ff9b::${high}:${low}`,
    "IPv4-mapped": `::ffff:${high}:${low}`,
    "IPv4-translated": `::ffff:0:${high}:${low}`,
  };
}

const judge = (address: string, own: string[] = []) =>
  addressRefusal([address], { own, privateOk: false });

Deno.test("an IPv6 address that carries IPv4 (6to4, Teredo, NAT64, mapped, translated) is refused exactly when its IPv4 address is", () => {
  const rest = fc.array(word, { minLength: 5, maxLength: 5 });
  fc.assert(
    fc.property(fc.tuple(octet, octet, octet, octet), rest, (parts, bits) => {
      const expected = judge(parts.join("."));
      for (const [form, address] of Object.entries(carriers(parts, bits))) {
        assertEquals(judge(address), expected, `${form} ${address} carries ${parts.join(".")}`);
      }
    }),
    { numRuns: 2000 },
  );
});

Deno.test("an IPv6 address that carries one of the box's own IPv4 addresses is the box's own", () => {
  const rest = fc.array(word, { minLength: 5, maxLength: 5 });
  const publicV4 = fc.tuple(fc.integer({ min: 1, max: 9 }), octet, octet, octet);
  fc.assert(fc.property(publicV4, rest, (parts, bits) => {
    const own = [parts.join(".")];
    for (const [form, address] of Object.entries(carriers(parts, bits))) {
      if (form === "Teredo server") continue;
      assertEquals(judge(address, own), "own_address", `${form} ${address}`);
    }
    // Another host behind the same 6to4 site is not the box's own IPv6 address.
    const [high, low] = words(parts);
    assertEquals(judge(`2002:${high}:${low}::2`, [`2002:${high}:${low}::1`]), null);
  }));
});

Deno.test("a table of carriers: loopback, private, metadata and this-network IPv4 inside 6to4, Teredo and NAT64 are refused; public ones pass", () => {
  const table: [string, string | null][] = [
    ["2002:7f00:1::1", "private_address"], // 6to4 of 127.0.0.1
    ["2002:c0a8:101::", "private_address"], // 192.168.1.1
    ["2002:a00:1:ffff::", "private_address"], // 10.0.0.1
    ["2002:a9fe:a9fe::1", "private_address"], // 169.254.169.254, metadata
    ["2002:0:0::1", "private_address"], // 0.0.0.0
    ["2002:808:808::1", null], // 8.8.8.8
    ["2001:0:4136:e378:8000:63bf:80ff:fffe", "private_address"], // Teredo client 127.0.0.1
    ["2001:0:4136:e378:8000:63bf:3f57:fefe", "private_address"], // client 192.168.1.1
    ["2001:0:4136:e378:8000:63bf:5601:5601", "private_address"], // client 169.254.169.254
    ["2001:0:7f00:1:8000:63bf:f7f7:f7f7", "private_address"], // server 127.0.0.1
    ["2001:0:4136:e378:8000:63bf:f7f7:f7f7", null], // client 8.8.8.8, server 65.54.227.120
    ["64:ff9b::7f00:1", "private_address"], // NAT64 of 127.0.0.1
    ["64:ff9b::a9fe:a9fe", "private_address"],
    ["64:ff9b::808:808", null],
    ["64:ff9b:1::808:808", "private_address"], // local-use NAT64: refused whole
    ["64:ff9b:1:ffff::1", "private_address"],
    ["64:ff9b:5::1", "private_address"], // the unassigned rest of 64:ff9b::/32
    ["::ffff:0:7f00:1", "private_address"], // IPv4-translated 127.0.0.1
    ["::7f00:1", "private_address"], // IPv4-compatible 127.0.0.1
    ["2001:db9::1", null], // outside Teredo's 2001::/32
    ["2003::7f00:1", null], // outside 6to4's 2002::/16
  ];
  assertEquals(table.map(([address]) => [address, judge(address)]), table);
  // The metadata address is refused even where private addresses are allowed.
  for (const address of ["2002:a9fe:a9fe::1", "2001:0:808:808::5601:5601", "64:ff9b::a9fe:a9fe"]) {
    assertEquals(addressRefusal([address], { own: [], privateOk: true }), "private_address");
  }
});

Deno.test("a listed name that resolves to a 6to4, Teredo or NAT64 carrier of a refused IPv4 address is refused as private_address", async () => {
  const targets = {
    "six.test": "2002:7f00:1::1",
    "teredo.test": "2001:0:4136:e378:8000:63bf:80ff:fffe",
    "nat.test": "64:ff9b:1::a00:1",
  };
  const proxy = await startProxy({ hosts: Object.keys(targets), resolve: targets });
  try {
    for (const name of Object.keys(targets)) {
      const answer = text(await exchange(proxy, `CONNECT ${name}:443 HTTP/1.1\r\n\r\n`));
      assertStringIncludes(answer, "reason=private_address", name);
    }
    assertEquals(
      proxy.events,
      Object.keys(targets).map((host) => ({ host, port: 443, reason: "private_address" })),
    );
  } finally {
    await proxy.close();
  }
});

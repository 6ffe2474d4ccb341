/** The egress host grammar: one spelling of each host, and host-list entries matched by it. */
import { assertEquals } from "../assert.ts";
import { canonicalHost, entryMatches, parseHostEntry } from "../../mod/config/mod.ts";

Deno.test("a host name is lower case, without one trailing dot, in IDNA's ASCII form", () => {
  assertEquals(canonicalHost("API.Example.COM."), { kind: "name", host: "api.example.com" });
  assertEquals(canonicalHost("Bücher.example"), { kind: "name", host: "xn--bcher-kva.example" });
  assertEquals("problem" in canonicalHost("a.example.."), true);
  assertEquals("problem" in canonicalHost("a%2eexample"), true);
  assertEquals("problem" in canonicalHost("a b"), true);
});

Deno.test("an address has one spelling; every other spelling of one is refused as an address", () => {
  assertEquals(canonicalHost("10.0.0.5"), { kind: "ip", host: "10.0.0.5", family: 4 });
  assertEquals(canonicalHost("[2001:DB8:0::1]"), { kind: "ip", host: "2001:db8::1", family: 6 });
  for (
    const odd of [
      "2130706433",
      "0x7f.1",
      "0177.0.0.1",
      "127.1",
      "1.2.3.4.5",
      "256.0.0.1",
      "[::ffff:127.0.0.1]",
      "[::127.0.0.1]",
      "[64:ff9b::7f00:1]",
      "[fe80::1%25eth0]",
      "１２７．０．０．１",
    ]
  ) {
    assertEquals(canonicalHost(odd), {
      problem: "is an IP address spelt in an unusual way",
      address: true,
    }, odd);
  }
});

Deno.test("an entry allows its ports (443 and 80 when none), and *.x.y names under x.y only", () => {
  const entry = (text: string) => {
    const parsed = parseHostEntry(text);
    if ("problem" in parsed) throw new Error(parsed.problem);
    return parsed;
  };
  const name = (host: string) => ({ kind: "name", host }) as const;
  assertEquals(entryMatches(entry("a.example"), { host: name("a.example"), port: 443 }), true);
  assertEquals(entryMatches(entry("a.example"), { host: name("a.example"), port: 80 }), true);
  assertEquals(entryMatches(entry("a.example"), { host: name("a.example"), port: 8443 }), false);
  assertEquals(
    entryMatches(entry("b.example:8443"), { host: name("b.example"), port: 8443 }),
    true,
  );
  assertEquals(
    entryMatches(entry("b.example:8443"), { host: name("b.example"), port: 443 }),
    false,
  );
  assertEquals(
    entryMatches(entry("*.npmjs.org"), { host: name("registry.npmjs.org"), port: 443 }),
    true,
  );
  assertEquals(
    entryMatches(entry("*.npmjs.org"), { host: name("a.b.npmjs.org"), port: 443 }),
    true,
  );
  assertEquals(entryMatches(entry("*.npmjs.org"), { host: name("npmjs.org"), port: 443 }), false);
  assertEquals(
    entryMatches(entry("*.npmjs.org"), { host: name("evilnpmjs.org"), port: 443 }),
    false,
  );
  const v4 = { kind: "ip", host: "10.0.0.5", family: 4 } as const;
  assertEquals(entryMatches(entry("10.0.0.5:8080"), { host: v4, port: 8080 }), true);
  assertEquals(entryMatches(entry("10.0.0.5:8080"), { host: name("10.0.0.5"), port: 8080 }), false);
  const v6 = { kind: "ip", host: "2001:db8::1", family: 6 } as const;
  assertEquals(entryMatches(entry("[2001:db8:0:0::1]"), { host: v6, port: 443 }), true);
});

import { assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { ConfigError, parseConfig } from "../../mod/config/mod.ts";

Deno.test("[egress] defaults to no hosts, no private hosts, no resolve map and deny", () => {
  assertEquals(parseConfig("g.toml", "").egress, {
    hosts: [],
    allow_private_hosts: [],
    resolve: {},
    unknown: "deny",
  });
});

Deno.test("[egress] reads every form of host entry, the resolve map and ask", () => {
  const text = [
    "[egress]",
    'hosts = ["a.example", "*.npmjs.org", "b.example:8443", "10.0.0.5:8080", "[2001:db8::1]:443"]',
    'allow_private_hosts = ["printer.lan", "10.0.0.5"]',
    'resolve = { "api.test" = "127.0.0.1", "six.test" = "::1" }',
    'unknown = "ask"',
    "",
  ].join("\n");
  assertEquals(parseConfig("g.toml", text).egress, {
    hosts: ["a.example", "*.npmjs.org", "b.example:8443", "10.0.0.5:8080", "[2001:db8::1]:443"],
    allow_private_hosts: ["printer.lan", "10.0.0.5"],
    resolve: { "api.test": "127.0.0.1", "six.test": "::1" },
    unknown: "ask",
  });
});

Deno.test("an egress host entry that is not one names its line, its index and what is wrong", () => {
  const cases: [string, string][] = [
    ['"2130706433"', "is an IP address spelt in an unusual way"],
    ['"0x7f.1"', "is an IP address spelt in an unusual way"],
    ['"a.example:0"', "has a port that is not a number from 1 to 65535"],
    ['"2001:db8::1"', "is an IPv6 address without brackets"],
    ['"*.10.0.0.1"', "puts *. before an IP address"],
    ['"a b.example"', "has a host that has a character that a host name may not hold"],
    ['"https://a.example"', "has a port that is not a number"],
  ];
  for (const [entry, problem] of cases) {
    const error = assertThrows(
      () => parseConfig("g.toml", `[egress]\nhosts = ["ok.example", ${entry}]\n`),
      ConfigError,
    );
    assertEquals([error.line, error.key], [2, "egress.hosts.1"], entry);
    assertStringIncludes(error.message, `${entry} ${problem}`);
    assertStringIncludes(error.message, "see runbook.md#config-invalid");
  }
});

Deno.test("allow_private_hosts refuses a port, resolve a non-name or a non-address, unknown a third value, each at its line", () => {
  const cases: [string, string, string][] = [
    ['allow_private_hosts = ["printer.lan:631"]', "egress.allow_private_hosts.0", "has a port"],
    ['resolve = { "10.0.0.1" = "10.0.0.2" }', "egress.resolve.10.0.0.1", "is not a host name"],
    ['resolve = { "api.test" = "0x7f.1" }', "egress.resolve.api.test", "is not an IP address"],
    ['unknown = "allow"', "egress.unknown", "deny"],
  ];
  for (const [line, key, problem] of cases) {
    const error = assertThrows(() => parseConfig("g.toml", `[egress]\n${line}\n`), ConfigError);
    assertEquals([error.line, error.key], [2, key], line);
    assertStringIncludes(error.message, problem);
  }
});

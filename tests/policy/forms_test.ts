/**
 * The path and host rules of docs/grants.md#paths-hosts-and-urls, each decided through `decide`,
 * and the forms of host names and URLs.
 */
import { decide, hostProblem, parseUrl, pathProblem } from "../../mod/policy/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { at, grantSet } from "./helpers.ts";

const notes = grantSet({ notes: { tool: "read_file", paths: ["/home/kyle/notes"] } });

function readOutcome(path: string): string {
  const outcome = decide({ tool: "read_file", arguments: { path } }, { grants: notes, ...at() });
  return outcome.kind === "denied" ? outcome.denial.reason : outcome.kind;
}

const PATH_ROWS: [string, string][] = [
  ["/home/kyle/notes/a.md", "allowed"],
  ["/home/kyle/notes", "allowed"],
  ["/home/kyle/notes2/a.md", "no_grant"],
  ["/home/kyle/notes/../.ssh/id", "invalid_arguments"],
  ["notes/a.md", "invalid_arguments"],
  ["/home/kyle//notes/./a.md", "invalid_arguments"],
];
for (const [requested, expected] of PATH_ROWS) {
  Deno.test(`paths table: grant /home/kyle/notes, read of ${requested} is ${expected}`, () => {
    assertEquals(readOutcome(requested), expected);
  });
}

Deno.test("paths table: a grant of / makes the grant file invalid (rule 7)", () => {
  let message = "";
  try {
    grantSet({ root: { tool: "read_file", paths: ["/"] } });
  } catch (error) {
    message = String(error);
  }
  assert(message.includes("a grant of the whole file system is not supported"), message);
});

Deno.test("a path is invalid with a trailing /, a lone ., a NUL or over 4,096 bytes", () => {
  assert(pathProblem("/home/kyle/notes/") !== null);
  assert(pathProblem("/home/./kyle") !== null);
  assert(pathProblem("/home/kyle/..") !== null);
  assert(pathProblem("/home/\0kyle") !== null);
  assert(pathProblem("/" + "a".repeat(4095)) === null, "4,096 bytes is the limit, inclusive");
  assert(pathProblem("/" + "a".repeat(4096)) !== null);
  assert(pathProblem("/" + "é".repeat(2048)) !== null, "the limit is in bytes, not characters");
  assert(pathProblem("/") === null);
  assert(pathProblem("/home/kyle/.notes/...") === null, "dot files and ... are plain names");
});

Deno.test("a read of a trailing-slash path is invalid_arguments, never normalised", () => {
  assertEquals(readOutcome("/home/kyle/notes/"), "invalid_arguments");
});

function fetchOutcome(url: string, pattern = "example.com"): string {
  const grants = grantSet({ fetch: { tool: "http_fetch", hosts: [pattern] } });
  const outcome = decide({ tool: "http_fetch", arguments: { url } }, { grants, ...at() });
  return outcome.kind === "denied" ? outcome.denial.reason : outcome.kind;
}

const HOST_ROWS: [string, string, string][] = [
  ["example.com", "example.com", "allowed"],
  ["example.com", "www.example.com", "no_grant"],
  ["*.example.com", "www.example.com", "allowed"],
  ["*.example.com", "a.b.example.com", "allowed"],
  ["*.example.com", "example.com", "no_grant"],
];
for (const [pattern, host, expected] of HOST_ROWS) {
  Deno.test(`hosts table: grant host ${pattern}, URL host ${host} is ${expected}`, () => {
    assertEquals(fetchOutcome(`https://${host}/x`, pattern), expected);
  });
}

Deno.test("hosts table: listing both example.com and *.example.com allows both", () => {
  const grants = grantSet({
    both: { tool: "http_fetch", hosts: ["example.com", "*.example.com"] },
  });
  for (const url of ["https://example.com/", "https://www.example.com/"]) {
    assertEquals(
      decide({ tool: "http_fetch", arguments: { url } }, { grants, ...at() }).kind,
      "allowed",
    );
  }
});

Deno.test("every spelling of an IPv4 address is not a host name", () => {
  for (const host of ["127.0.0.1", "127.1", "10.0.0.0x1", "0x7f.1"]) {
    assert(hostProblem(host) !== null, host);
  }
});

Deno.test("host names: lowercase, two labels or more, no - at a label's ends, at most 253 bytes", () => {
  for (const good of ["example.com", "a-b.example.com", "x1.io", "a.b.c.d.example.com"]) {
    assertEquals(hostProblem(good), null, good);
  }
  for (
    const bad of ["Example.com", "localhost", "-a.com", "a-.com", "a..com", ".a.com", "a.com.", ""]
  ) {
    assert(hostProblem(bad) !== null, bad);
  }
  assertEquals(hostProblem(`${"a".repeat(63)}.com`), null);
  assert(hostProblem(`${"a".repeat(64)}.com`) !== null, "a label is at most 63 bytes");
  const long = `${"a".repeat(61)}.`.repeat(4) + "com"; // 4 * 62 + 3 = 251
  assertEquals(hostProblem(long), null);
  assert(hostProblem(`ab.${long}`) !== null, "254 bytes is over the limit");
});

Deno.test("URLs: https only, no userinfo, no port but 443, no space, at most 2,048 bytes", () => {
  const valid = [
    "https://example.com",
    "https://example.com/",
    "https://example.com:443/a?b=c#d",
    "https://example.com?q=1",
    "https://example.com/a@b",
  ];
  for (const url of valid) assert(!("problem" in parseUrl(url)), url);
  const invalid = [
    "http://example.com/",
    "HTTPS://example.com/",
    "https://user@example.com/",
    "https://example.com:8443/",
    "https://example.com:/",
    "https://127.0.0.1/",
    "https://[::1]/",
    "https://EXAMPLE.com/",
    "https://example.com/a b",
    "https://example.com/\u00e9",
    "https://example.com/\t",
    "https://example.com/" + "a".repeat(2048 - 20 + 1),
  ];
  for (const url of invalid) assert("problem" in parseUrl(url), url);
  assert(!("problem" in parseUrl("https://example.com/" + "a".repeat(2048 - 20))), "2,048 bytes");
  assertEquals(fetchOutcome("https://user@example.com/"), "invalid_arguments");
});

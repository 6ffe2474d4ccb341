/**
 * docs/grants.md#when-the-grant-set-is-invalid: one case per rule, each with the text its problem
 * must contain, the line it names where the parser gives one, and gurt's extension of rule 3 to app
 * tools.
 */
import { type GrantProblem, isDormant, parseGrant } from "../../mod/policy/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { NOTES_READ } from "./helpers.ts";
import { grant } from "../kit/mod.ts";
import { standardRegistry } from "../../mod/tools/mod.ts";

/** The app tools of a standard box, as the core passes them. */
const APP_TOOLS = standardRegistry().appToolNames();

const options = { appTools: APP_TOOLS };

function problems(file: string, content: string | Uint8Array): GrantProblem[] {
  const parsed = parseGrant({ file, content }, options);
  assert(!parsed.ok, `expected ${file} to be invalid`);
  return parsed.problems;
}

function only(file: string, content: string | Uint8Array): GrantProblem {
  const found = problems(file, content);
  assertEquals(found.length, 1, JSON.stringify(found));
  return found[0];
}

Deno.test("the seed's example grant notes-read.toml loads with its fields and file hash", async () => {
  const parsed = parseGrant({ file: "grants/notes-read.toml", content: NOTES_READ }, options);
  assert(parsed.ok, JSON.stringify(parsed));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(NOTES_READ));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  assertEquals(parsed.grant, {
    id: "notes-read",
    file: "grants/notes-read.toml",
    sha256: hex,
    tool: "read_file",
    mode: "auto",
    maxTaint: "secret",
    resultClass: "private",
    untrusted: false,
    expires: new Date("2027-01-01T00:00:00.000Z"),
    paths: ["/home/kyle/notes"],
    hosts: [],
  });
});

Deno.test("rule 1: TOML that does not parse is invalid, with the parser's line", () => {
  const problem = only("g/a.toml", 'tool = "read_file"\nmode = "auto\n');
  assertEquals(problem.line, 2);
  assertStringIncludes(problem.problem, "not valid TOML");
});

Deno.test("rule 1: a file that is not UTF-8 is invalid", () => {
  const bytes = new TextEncoder().encode(grant({ tool: "read_file", paths: ["/a"] }));
  const broken = new Uint8Array([...bytes, 0xff, 0xfe]);
  assertStringIncludes(only("g/a.toml", broken).problem, "not valid UTF-8");
});

Deno.test("rule 1: an unknown field is invalid, named with its line", () => {
  const text = grant({ tool: "read_file", paths: ["/a"] }).replace(
    "untrusted = false",
    'untrusted = false\ncolour = "red"',
  );
  const problem = only("g/a.toml", text);
  assertEquals(problem, { file: "g/a.toml", line: 6, problem: "colour: unknown field" });
  const nested = grant({ tool: "read_file", paths: ["/a"] }) + 'users = ["kyle"]\n';
  assertEquals(only("g/a.toml", nested).problem, "constraints.users: unknown field");
});

Deno.test("rule 1: a missing or mistyped field is invalid, named with its field", () => {
  const missing = only(
    "g/a.toml",
    'tool = "read_file"\nmax_taint = "secret"\nresult_class = "private"\n[constraints]\npaths = ["/a"]\n',
  );
  assertEquals(missing.problem, "mode: is required");
  const mistyped = only(
    "g/a.toml",
    grant({ tool: "read_file", paths: ["/a"] }).replace(
      "untrusted = false",
      'untrusted = "no"',
    ),
  );
  assertEquals(mistyped.line, 5);
  assertStringIncludes(mistyped.problem, "untrusted: expected boolean");
  const badMode = only(
    "g/a.toml",
    grant({ tool: "read_file", paths: ["/a"] }).replace('mode = "auto"', 'mode = "allow"'),
  );
  assertEquals(badMode.line, 2);
  assertStringIncludes(badMode.problem, "mode: must be one of auto, ask, deny");
  const badExpiry = only(
    "g/a.toml",
    grant({ tool: "read_file", paths: ["/a"], expires: "2027-02-30T00:00:00Z" }),
  );
  assertStringIncludes(badExpiry.problem, "expires: must be a timestamp with a zone");
});

Deno.test("rule 1: expires may be an unquoted TOML date-time with a zone, not a local one", () => {
  const base = grant({ tool: "read_file", paths: ["/a"] });
  const zoned = parseGrant({
    file: "g/a.toml",
    content: base.replace("\n\n[", "\nexpires = 2027-01-01T00:00:00Z\n\n["),
  }, options);
  assert(zoned.ok);
  assertEquals(zoned.grant.expires?.toISOString(), "2027-01-01T00:00:00.000Z");
  const local = only("g/a.toml", base.replace("\n\n[", "\nexpires = 2027-01-01T00:00:00\n\n["));
  assertStringIncludes(local.problem, "expires: must be a timestamp with a zone");
});

Deno.test("rule 2: a .toml file whose stem is not a valid id is invalid", () => {
  const text = grant({ tool: "read_file", paths: ["/a"] });
  for (const name of ["Notes.toml", "notes_read.toml", ".toml", `${"a".repeat(65)}.toml`]) {
    assertStringIncludes(only(`g/${name}`, text).problem, "is not a grant id", name);
  }
  assert(
    parseGrant({ file: `g/${"a".repeat(64)}.toml`, content: text }, options).ok,
    "64 characters is the limit",
  );
});

Deno.test("rule 3: a tool that is neither built in nor a registered app tool is invalid", () => {
  const problem = only("g/a.toml", grant({ tool: "read_files", paths: ["/a"] }));
  assertEquals(problem.line, 1);
  assertStringIncludes(problem.problem, 'tool: "read_files" is not a tool gurt knows');
  assertStringIncludes(problem.problem, "example.spend");
});

Deno.test("rule 3 in gurt: an app tool's grant loads, and takes no paths or hosts", () => {
  assert(
    parseGrant(
      { file: "g/spend.toml", content: grant({ tool: "example.spend", mode: "ask" }) },
      options,
    ).ok,
  );
  const withPaths = only("g/spend.toml", grant({ tool: "example.spend", paths: ["/a"] }));
  assertStringIncludes(withPaths.problem, "the app tool example.spend does not take paths");
  const withHosts = only("g/spend.toml", grant({ tool: "example.echo", hosts: ["a.com"] }));
  assertStringIncludes(withHosts.problem, "the app tool example.echo does not take hosts");
  // A tool an installed app does not offer is an error; one of an app not installed is dormant.
  const unknownTool = parseGrant({ file: "g/x.toml", content: grant({ tool: "other.spend" }) }, {
    appTools: new Set(["other.echo"]),
  });
  assert(!unknownTool.ok);
  const removedApp = parseGrant({ file: "g/x.toml", content: grant({ tool: "other.spend" }) }, {
    appTools: new Set(),
  });
  assert(removedApp.ok);
});

Deno.test("rule 4: a grant that sets secret is invalid", () => {
  const text = grant({ tool: "read_file", paths: ["/a"] }).replace(
    "\n\n[",
    '\nsecret = "STRIPE_KEY"\n\n[',
  );
  const problem = only("g/a.toml", text);
  assertEquals(problem.line, 6);
  assertStringIncludes(problem.problem, "secrets are not supported");
});

Deno.test("rule 5: a grant with constraints.patterns is invalid; an empty list is fine", () => {
  const base = grant({ tool: "read_file", paths: ["/a"] });
  assertStringIncludes(
    only("g/a.toml", base + 'patterns = ["*.md"]\n').problem,
    "patterns are not supported",
  );
  assert(parseGrant({ file: "g/a.toml", content: base + "patterns = []\n" }, options).ok);
});

const RULE_6: [string, "required" | "optional" | "empty", "required" | "empty"][] = [
  ["read_file", "required", "empty"],
  ["write_file", "required", "empty"],
  ["shell", "optional", "empty"],
  ["http_fetch", "empty", "required"],
];
for (const [tool, paths, hosts] of RULE_6) {
  Deno.test(`rule 6: ${tool} takes paths ${paths} and hosts ${hosts}`, () => {
    const somePaths = ["/a"];
    const someHosts = ["example.com"];
    const base = {
      tool,
      paths: paths === "empty" ? undefined : somePaths,
      hosts: hosts === "empty" ? undefined : someHosts,
    };
    assert(
      parseGrant({ file: "g/a.toml", content: grant(base) }, options).ok,
      "the well-formed grant loads",
    );
    if (paths === "required") {
      assertStringIncludes(
        only("g/a.toml", grant({ ...base, paths: undefined })).problem,
        `${tool} requires at least one entry in constraints.paths`,
      );
      assertStringIncludes(
        only("g/a.toml", grant({ ...base, paths: [] })).problem,
        "requires at least one",
      );
    }
    if (paths === "optional") {
      assert(
        parseGrant({ file: "g/a.toml", content: grant({ ...base, paths: somePaths }) }, options).ok,
      );
    }
    if (paths === "empty") {
      assertStringIncludes(
        only("g/a.toml", grant({ ...base, paths: somePaths })).problem,
        `${tool} does not take paths`,
      );
    }
    if (hosts === "required") {
      assertStringIncludes(
        only("g/a.toml", grant({ ...base, hosts: undefined })).problem,
        `${tool} requires at least one entry in constraints.hosts`,
      );
    }
    if (hosts === "empty") {
      assertStringIncludes(
        only("g/a.toml", grant({ ...base, hosts: someHosts })).problem,
        `${tool} does not take hosts`,
      );
    }
  });
}

Deno.test("rule 7: a grant path that is not a valid absolute path, or is /, is invalid", () => {
  const root = only("g/a.toml", grant({ tool: "read_file", paths: ["/"] }));
  assertEquals(root.line, 8);
  assertStringIncludes(root.problem, "a grant of the whole file system is not supported");
  for (const bad of ["a/b", "/a/", "/a//b", "/a/./b", "/a/../b", "/a\u0000b"]) {
    assertStringIncludes(
      only("g/a.toml", grant({ tool: "read_file", paths: [bad] })).problem,
      "constraints.paths:",
      bad,
    );
  }
});

Deno.test("rule 8: a host that is not a valid host pattern is invalid", () => {
  for (
    const bad of [
      "127.0.0.1",
      "*.com",
      "Example.com",
      "*example.com",
      "a.*.com",
      "example.com:443",
      "https://example.com",
    ]
  ) {
    const problem = only("g/a.toml", grant({ tool: "http_fetch", hosts: [bad] }));
    assertStringIncludes(problem.problem, "is not a valid host pattern", bad);
    assertEquals(problem.line, 8);
  }
});

Deno.test("rule 9: a deny grant whose max_taint is not secret is invalid", () => {
  for (const taint of ["public", "private"] as const) {
    const problem = only(
      "g/a.toml",
      grant({ tool: "read_file", mode: "deny", max_taint: taint, paths: ["/a"] }),
    );
    assertEquals(problem.line, 3);
    assertStringIncludes(problem.problem, "a deny grant must apply at every taint");
  }
  assert(
    parseGrant({
      file: "g/a.toml",
      content: grant({ tool: "read_file", mode: "deny", paths: ["/a"] }),
    }, options)
      .ok,
  );
});

Deno.test("every problem of a file is reported, each with its own line", () => {
  const text = grant({ tool: "read_file", mode: "deny", max_taint: "private", paths: ["/"] });
  const found = problems("g/Bad.toml", text);
  assertEquals(found.map((p) => p.line), [null, 8, 3]);
});

Deno.test("a grant of a tool of an app that is not installed is kept and matches nothing; a tool an installed app lacks is an error", () => {
  const apps = new Set(["github.create_issue"]);
  const text = (tool: string) =>
    new TextEncoder().encode(
      `tool = "${tool}"\nmode = "auto"\nmax_taint = "secret"\nresult_class = "private"\n`,
    );
  const removed = parseGrant({ file: "g.toml", content: text("linear.create_issue") }, {
    appTools: apps,
  });
  assertEquals(removed.ok, true, JSON.stringify(removed));
  const typo = parseGrant({ file: "g.toml", content: text("github.create_isue") }, {
    appTools: apps,
  });
  assertEquals(typo.ok, false);
  assertEquals(isDormant("linear.create_issue", apps), true);
  assertEquals(isDormant("github.create_isue", apps), false);
  assertEquals(isDormant("example.nope", apps), false);
  assertEquals(isDormant("read_files", apps), false);
});

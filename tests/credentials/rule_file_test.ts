/**
 * docs/credentials.md#the-rule-file: each field's checks, with the line each problem names, and a
 * whole rule loaded with its fields and file hash.
 */
import { type CredentialProblem, parseCredentialRule } from "../../mod/credentials/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";

const GITHUB = [
  'host = "github.com"',
  'secret = "GITHUB_TOKEN"',
  'basic = { user = "x-access-token" }',
  "git = true",
  "",
].join("\n");

function only(content: string, file = "credentials/rule.toml"): CredentialProblem {
  const parsed = parseCredentialRule({ file, content });
  assert(!parsed.ok, `expected ${JSON.stringify(content)} to be invalid`);
  assertEquals(parsed.problems.length, 1, JSON.stringify(parsed.problems));
  return parsed.problems[0];
}

Deno.test("a GitHub rule loads with its fields, its id from the file name and the sha256 of its bytes", async () => {
  const parsed = parseCredentialRule({ file: "credentials/github.toml", content: GITHUB });
  assert(parsed.ok, JSON.stringify(parsed));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(GITHUB));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  assertEquals(parsed.rule, {
    id: "github",
    file: "credentials/github.toml",
    sha256: hex,
    host: "github.com",
    port: 443,
    secret: "GITHUB_TOKEN",
    placement: { kind: "basic", user: "x-access-token" },
    env: [],
    git: true,
    caFile: null,
  });
});

Deno.test("header, query, port, env and ca_file are read as written", () => {
  const header = parseCredentialRule({
    file: "credentials/gh-api.toml",
    content: 'host = "api.github.com"\nport = 8443\nsecret = "GH"\n' +
      'header = "Authorization: Bearer {}"\nenv = ["GH_TOKEN", "GITHUB_TOKEN"]\n' +
      'ca_file = "/etc/gurt/ca.pem"\n',
  });
  assert(header.ok, JSON.stringify(header));
  assertEquals(header.rule.placement, {
    kind: "header",
    name: "Authorization",
    format: "Bearer {}",
  });
  assertEquals(header.rule.port, 8443);
  assertEquals(header.rule.env, ["GH_TOKEN", "GITHUB_TOKEN"]);
  assertEquals(header.rule.caFile, "/etc/gurt/ca.pem");
  const query = parseCredentialRule({
    file: "credentials/q.toml",
    content: 'host = "api.example.com"\nsecret = "K"\nquery = "access_token"\n',
  });
  assert(query.ok, JSON.stringify(query));
  assertEquals(query.rule.placement, { kind: "query", parameter: "access_token" });
});

/** One invalid field: the file's text, the line the problem must name, and words it must hold. */
const CASES: { name: string; content: string; line: number | null; says: string }[] = [
  {
    name: "a host with one label",
    content: 'secret = "K"\nhost = "localhost"\nquery = "t"\n',
    line: 2,
    says: 'host: "localhost" is not a valid host name',
  },
  {
    name: "a host in upper case",
    content: 'secret = "K"\nquery = "t"\nhost = "API.Example.com"\n',
    line: 3,
    says: "host:",
  },
  {
    name: "an IP address as host",
    content: 'host = "10.0.0.5"\nsecret = "K"\nquery = "t"\n',
    line: 1,
    says: "IP addresses are not host names",
  },
  {
    name: "no host",
    content: 'secret = "K"\nquery = "t"\n',
    line: null,
    says: "host: is required",
  },
  {
    name: "a port of 0",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nport = 0\n',
    line: 4,
    says: "port: must be an integer from 1 to 65535",
  },
  {
    name: "a port above 65535",
    content: 'host = "a.example"\nport = 65536\nsecret = "K"\nquery = "t"\n',
    line: 2,
    says: "port: must be an integer",
  },
  {
    name: "a port as a string",
    content: 'host = "a.example"\nport = "443"\nsecret = "K"\nquery = "t"\n',
    line: 2,
    says: "port:",
  },
  {
    name: "a secret that is not a vault key name",
    content: 'host = "a.example"\nquery = "t"\nsecret = "github-token"\n',
    line: 3,
    says: 'secret: "github-token" is not a vault key name',
  },
  {
    name: "no secret",
    content: 'host = "a.example"\nquery = "t"\n',
    line: null,
    says: "secret: is required",
  },
  {
    name: "no placement",
    content: 'host = "a.example"\nsecret = "K"\n',
    line: null,
    says: "must set one of header, basic and query",
  },
  {
    name: "two placements",
    content: 'host = "a.example"\nsecret = "K"\nheader = "X-Key: {}"\nquery = "key"\n',
    line: 4,
    says: "set exactly one of header, basic and query",
  },
  {
    name: "a header without its colon and space",
    content: 'host = "a.example"\nsecret = "K"\nheader = "Authorization:Bearer {}"\n',
    line: 3,
    says: 'header: must be "Name: format"',
  },
  {
    name: "a header format without {}",
    content: 'host = "a.example"\nsecret = "K"\nheader = "Authorization: Bearer"\n',
    line: 3,
    says: "header: must be",
  },
  {
    name: "a header format with {} twice",
    content: 'host = "a.example"\nsecret = "K"\nheader = "X-Key: {}{}"\n',
    line: 3,
    says: "header: must be",
  },
  {
    name: "a header name that is not a token",
    content: 'host = "a.example"\nsecret = "K"\nheader = "X Key: {}"\n',
    line: 3,
    says: 'header: "X Key" is not a header name',
  },
  {
    name: "a header that frames the request",
    content: 'host = "a.example"\nsecret = "K"\nheader = "Host: {}"\n',
    line: 3,
    says: "frames the request",
  },
  {
    name: "basic with a user that holds a colon",
    content: 'host = "a.example"\nsecret = "K"\nbasic = { user = "a:b" }\n',
    line: 3,
    says: 'basic.user: "a:b" is not a user name',
  },
  {
    name: "basic as a table with an unknown field",
    content: 'host = "a.example"\nsecret = "K"\n\n[basic]\nuser = "x"\npassword = "y"\n',
    line: 6,
    says: "basic.password: unknown field",
  },
  {
    name: "basic as a string",
    content: 'host = "a.example"\nsecret = "K"\nbasic = "x-access-token"\n',
    line: 3,
    says: "basic: must be a table",
  },
  {
    name: "a query name with a space",
    content: 'host = "a.example"\nsecret = "K"\nquery = "access token"\n',
    line: 3,
    says: "query: must be a query parameter name",
  },
  {
    name: "env naming PATH",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = ["GH_TOKEN", "PATH"]\n',
    line: 4,
    says: 'env: "PATH" is set by the sandbox',
  },
  {
    name: "env naming HOME",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = ["HOME"]\n',
    line: 4,
    says: 'env: "HOME"',
  },
  {
    name: "env naming BOX_SOCKET",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = ["BOX_SOCKET"]\n',
    line: 4,
    says: "starts with BOX_",
  },
  {
    name: "env naming GURT_HOME",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = ["GURT_HOME"]\n',
    line: 4,
    says: "starts with GURT_",
  },
  {
    name: "env naming GIT_CONFIG_COUNT",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = ["GIT_CONFIG_COUNT"]\n',
    line: 4,
    says: "starts with GIT_CONFIG_",
  },
  {
    name: "env naming LD_PRELOAD",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = ["LD_PRELOAD"]\n',
    line: 4,
    says: "starts with LD_",
  },
  {
    name: "env naming NODE_OPTIONS",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = ["NODE_OPTIONS"]\n',
    line: 4,
    says: "starts with NODE_",
  },
  {
    name: "env naming HTTPS_PROXY",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = ["HTTPS_PROXY"]\n',
    line: 4,
    says: "ends with _PROXY",
  },
  {
    name: "env naming SSL_CA_FILE",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = ["SSL_CA_FILE"]\n',
    line: 4,
    says: "holds _CA_",
  },
  {
    name: "env naming a lower-case name",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = ["gh_token"]\n',
    line: 4,
    says: "is not an environment variable name",
  },
  {
    name: "env as a string",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nenv = "GH_TOKEN"\n',
    line: 4,
    says: "env: expected an array",
  },
  {
    name: "git as a string",
    content: 'host = "a.example"\nsecret = "K"\nbasic = { user = "x" }\ngit = "yes"\n',
    line: 4,
    says: "git: expected true or false",
  },
  {
    name: "git with a header placement",
    content: 'host = "a.example"\nsecret = "K"\nheader = "X-Key: {}"\ngit = true\n',
    line: 4,
    says: "git = true needs basic",
  },
  {
    name: "a relative ca_file",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nca_file = "ca.pem"\n',
    line: 4,
    says: 'ca_file: "ca.pem" is not valid: it is not absolute',
  },
  {
    name: "a ca_file that climbs",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nca_file = "/etc/../root/ca.pem"\n',
    line: 4,
    says: "has a .. component",
  },
  {
    name: "an unknown field",
    content: 'host = "a.example"\nsecret = "K"\nquery = "t"\nvalue = "ghp_x"\n',
    line: 4,
    says: "value: unknown field",
  },
  {
    name: "TOML that does not parse",
    content: 'host = "a.example"\nsecret = "K\n',
    line: 2,
    says: "not valid TOML",
  },
];

for (const { name, content, line, says } of CASES) {
  Deno.test(`a rule with ${name} is invalid, naming line ${line ?? "none"}`, () => {
    const problem = only(content);
    assertStringIncludes(problem.problem, says);
    assertEquals(problem.line, line);
    assertEquals(problem.file, "credentials/rule.toml");
  });
}

Deno.test("a file name that is not a rule id is a problem of the file", () => {
  const problem = only(GITHUB, "credentials/GitHub.toml");
  assertEquals(problem.line, null);
  assertStringIncludes(problem.problem, '"GitHub.toml" is not a credential rule id');
});

Deno.test("bytes that are not UTF-8 are a problem of the file", () => {
  const parsed = parseCredentialRule({
    file: "credentials/a.toml",
    content: new Uint8Array([0xff]),
  });
  assert(!parsed.ok);
  assertEquals(parsed.problems, [
    { file: "credentials/a.toml", line: null, problem: "the file is not valid UTF-8" },
  ]);
});

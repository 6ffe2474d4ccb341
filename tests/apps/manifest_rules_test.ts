/**
 * Each rule of app.toml, refused with the file, the line and the key: unknown keys at every level,
 * what each kind takes, command, url, hosts, headers, secrets and tools. Each case is one manifest
 * that breaks one rule and is good otherwise (the last case of each test is accepted).
 */
import { parseManifest } from "../../mod/apps/manifest.ts";
import { assertEquals } from "../assert.ts";
import { appFolder, assertRefused, removeFolder } from "./manifest_kit.ts";

/** One manifest that breaks one rule: its lines, and the line, key and problem expected. */
type Case = [lines: string[], line: number | undefined, key: string, problem: string];

const MCP = ['kind = "mcp"', 'command = ["srv"]'];
const HTTP = ['kind = "mcp-http"', 'url = "https://mcp.example.com/mcp"'];
const MODULE = ['kind = "module"', 'module = "app.ts"'];

async function refusesEach(cases: Case[]): Promise<void> {
  const folder = await appFolder({ "app.ts": { text: "" } });
  try {
    for (const [lines, line, key, problem] of cases) {
      assertRefused(folder, lines, { line, key, problem });
    }
  } finally {
    await removeFolder(folder);
  }
}

/** Parses `lines` in a folder that holds app.ts, and returns the manifest. */
async function accepted(lines: string[]) {
  const folder = await appFolder({ "app.ts": { text: "" } });
  try {
    return parseManifest(`${folder}/app.toml`, lines.join("\n"), folder);
  } finally {
    await removeFolder(folder);
  }
}

Deno.test("an unknown key is refused at the top, in a secret, in a tool and in a header", async () => {
  await refusesEach([
    [[...MCP, "timeout = 5"], 3, "timeout", "unknown key"],
    [
      [...MCP, "[secrets.GH_TOKEN]", 'env = "GH"', "optional = true"],
      5,
      "secrets.GH_TOKEN.optional",
      "unknown key",
    ],
    [[...MCP, "[tools.create_issue]", "price = 5"], 4, "tools.create_issue.price", "unknown key"],
    [
      [...HTTP, "[headers]", 'Authorization = { secret = "K", prefix = "Bearer" }', "[secrets.K]"],
      4,
      "headers.Authorization.prefix",
      "unknown key",
    ],
    [[...MCP, "[network]", "hosts = []"], 3, "network", "unknown key"],
  ]);
});

Deno.test("kind is required and one of mcp, mcp-http, module; enabled, start and description are checked", async () => {
  await refusesEach([
    [['command = ["srv"]'], undefined, "kind", 'is required: "mcp", "mcp-http" or "module"'],
    [['kind = "docker"', 'command = ["srv"]'], 1, "kind", 'must be "mcp", "mcp-http" or "module"'],
    [[...MCP, 'enabled = "yes"'], 3, "enabled", "expected boolean"],
    [[...MCP, 'start = "sometimes"'], 3, "start", 'must be "lazy" or "eager"'],
    [[...MCP, `description = "${"d".repeat(501)}"`], 3, "description", "<=500"],
  ]);
  assertEquals((await accepted([...MCP, `description = "${"d".repeat(500)}"`])).kind, "mcp");
});

Deno.test("each kind's own key is required for it and refused for the others", async () => {
  await refusesEach([
    [['kind = "mcp"'], undefined, "command", 'is required for kind = "mcp"'],
    [['kind = "mcp-http"'], undefined, "url", 'is required for kind = "mcp-http"'],
    [['kind = "module"'], undefined, "module", 'is required for kind = "module"'],
    [[...MODULE, 'command = ["srv"]'], 3, "command", 'is only for kind = "mcp"'],
    [[...MCP, 'url = "https://a.example/"'], 3, "url", 'is only for kind = "mcp-http"'],
    [[...HTTP, 'module = "app.ts"'], 3, "module", 'is only for kind = "module"'],
    [[...MCP, "[headers]", 'X-A = "b"'], 3, "headers", 'is only for kind = "mcp-http"'],
  ]);
});

Deno.test("command is 1 to 64 strings without NUL, each at most 4096 bytes, and names its program plainly", async () => {
  const long = "€".repeat(1366); // 4098 bytes in 1366 characters
  await refusesEach([
    [['kind = "mcp"', "command = []"], 2, "command", "must hold the program to run"],
    [['kind = "mcp"', `command = [${'"a", '.repeat(64)}"a"]`], 2, "command", "more than 64"],
    [['kind = "mcp"', 'command = ["srv", "a\\u0000b"]'], 2, "command.1", "holds a NUL byte"],
    [['kind = "mcp"', `command = ["srv", "${long}"]`], 2, "command.1", "longer than 4096 bytes"],
    [['kind = "mcp"', 'command = ["srv", 5]'], 2, "command.1", "expected string"],
    [['kind = "mcp"', 'command = "srv --flag"'], 2, "command", "expected array"],
    [['kind = "mcp"', 'command = ["bin/srv"]'], 2, "command.0", "must be an absolute path"],
    [['kind = "mcp"', 'command = ["/usr/../bin/srv"]'], 2, "command.0", "not a clean absolute"],
    [['kind = "mcp"', 'command = ["./bin//srv"]'], 2, "command.0", "must be a clean relative"],
    [
      ['kind = "mcp"', 'command = ["{DB}"]', "[secrets.DB]", "arg = true"],
      2,
      "command.0",
      "may not be a secret's placeholder",
    ],
  ]);
  const ok = await accepted(['kind = "mcp"', `command = ["/usr/bin/env", "${"€".repeat(1365)}"]`]);
  assertEquals(ok.kind === "mcp" && ok.command[0], "/usr/bin/env");
});

Deno.test("module is a relative .ts, .js or .mjs path", async () => {
  await refusesEach([
    [['kind = "module"', 'module = "app.py"'], 2, "module", "must name a .ts, .js or .mjs file"],
    [['kind = "module"', 'module = "/srv/app.ts"'], 2, "module", "relative to the app's folder"],
  ]);
});

Deno.test("url is http or https with no user, password or fragment, and http only to loopback", async () => {
  await refusesEach([
    [['kind = "mcp-http"', 'url = "mcp.example.com"'], 2, "url", "is not a URL"],
    [['kind = "mcp-http"', 'url = "ftp://mcp.example.com/"'], 2, "url", "http or https"],
    [
      ['kind = "mcp-http"', 'url = "https://u:p@mcp.example.com/"'],
      2,
      "url",
      "user name or password",
    ],
    [['kind = "mcp-http"', 'url = "https://mcp.example.com/mcp#x"'], 2, "url", "fragment"],
    [['kind = "mcp-http"', 'url = "https://mcp.example.com/mcp#"'], 2, "url", "fragment"],
    [['kind = "mcp-http"', 'url = "http://mcp.example.com/mcp"'], 2, "url", "must be https"],
  ]);
  const local = await accepted(['kind = "mcp-http"', 'url = "http://127.0.0.1:8931/mcp"']);
  assertEquals(local.kind === "mcp-http" && local.url, "http://127.0.0.1:8931/mcp");
});

Deno.test("hosts are egress entries, and mcp-http takes none (the core connects to its url)", async () => {
  await refusesEach([
    [[...MCP, 'hosts = ["ok.example", "bad host"]'], 3, "hosts.1", "may not hold"],
    [[...MCP, 'hosts = ["2130706433"]'], 3, "hosts.0", "spelt in an unusual way"],
    [[...MODULE, 'hosts = ["a.example:99999"]'], 3, "hosts.0", "port"],
    [[...HTTP, 'hosts = ["mcp.example.com"]'], 3, "hosts", 'is not for kind = "mcp-http"'],
  ]);
});

Deno.test("headers: names are tokens, values one line, format holds {} once, transport headers and case twins refused", async () => {
  const secret = ["[secrets.K]"];
  await refusesEach([
    [[...HTTP, "[headers]", '"Bad Header" = "x"'], 4, "headers.Bad Header", "is not a header name"],
    [[...HTTP, "[headers]", 'X-A = "a\\r\\nInjected: 1"'], 4, "headers.X-A", "control character"],
    [[...HTTP, "[headers]", "X-A = 5"], 4, "headers.X-A", "must be a string or { secret"],
    [
      [...HTTP, "[headers]", 'X-A = { secret = "K", format = "Bearer" }', ...secret],
      4,
      "headers.X-A.format",
      "exactly once",
    ],
    [
      [...HTTP, "[headers]", 'X-A = { secret = "K", format = "{}{}" }', ...secret],
      4,
      "headers.X-A.format",
      "exactly once",
    ],
    [
      [...HTTP, "[headers]", 'X-A = { secret = "K", format = "a\\n{}" }', ...secret],
      4,
      "headers.X-A.format",
      "control character",
    ],
    [
      [...HTTP, "[headers]", 'Host = "evil.example"'],
      4,
      "headers.Host",
      "set by HTTP or the MCP transport",
    ],
    [[...HTTP, "[headers]", 'mcp-session-id = "1"'], 4, "headers.mcp-session-id", "set by HTTP"],
    [[...HTTP, "[headers]", 'x-a = "1"', 'X-A = "2"'], 5, "headers.X-A", "set twice"],
  ]);
});

Deno.test("mcp-http secrets: each header's secret is declared, each declared secret is used, none has env, file or arg", async () => {
  await refusesEach([
    [
      [...HTTP, "[headers]", 'Authorization = { secret = "LINEAR_KEY" }'],
      4,
      "headers.Authorization.secret",
      '"LINEAR_KEY" is not a secret declared',
    ],
    [
      [
        ...HTTP,
        "[headers]",
        'Authorization = { secret = "A_KEY" }',
        "[secrets.A_KEY]",
        "[secrets.B_KEY]",
      ],
      6,
      "secrets.B_KEY",
      "is used by no header",
    ],
    [
      [
        ...HTTP,
        "[headers]",
        'Authorization = { secret = "A_KEY" }',
        "[secrets.A_KEY]",
        'env = "A"',
      ],
      6,
      "secrets.A_KEY.env",
      'is only for kind = "mcp"',
    ],
    [
      [...HTTP, "[secrets.A_KEY]", 'file = "a"'],
      4,
      "secrets.A_KEY.file",
      'is only for kind = "mcp"',
    ],
  ]);
});

Deno.test("module secrets take none of env, file and arg: the app host gives them to ctx.secret", async () => {
  await refusesEach([
    [[...MODULE, "[secrets.A_KEY]", 'env = "A"'], 4, "secrets.A_KEY.env", "ctx.secret"],
    [[...MODULE, "[secrets.A_KEY]", 'file = "a"'], 4, "secrets.A_KEY.file", "ctx.secret"],
    [[...MODULE, "[secrets.A_KEY]", "arg = true"], 4, "secrets.A_KEY.arg", "ctx.secret"],
  ]);
});

Deno.test("mcp secrets: a vault key name, exactly one of env, file and arg, each well formed and not shared", async () => {
  await refusesEach([
    [
      [...MCP, "[secrets.github_token]", 'env = "A"'],
      3,
      "secrets.github_token",
      "is not a vault key name",
    ],
    [[...MCP, "[secrets.A_KEY]"], 3, "secrets.A_KEY", "exactly one of env, file and arg = true"],
    [[...MCP, "[secrets.A_KEY]", "enabled = false"], 3, "secrets.A_KEY", "not none"],
    [
      [...MCP, "[secrets.A_KEY]", 'env = "A"', 'file = "a"'],
      3,
      "secrets.A_KEY",
      "not env and file",
    ],
    [
      [...MCP, "[secrets.A_KEY]", 'env = "1A"'],
      4,
      "secrets.A_KEY.env",
      "environment variable's name",
    ],
    [
      [...MCP, "[secrets.A_KEY]", 'env = "a_key"'],
      4,
      "secrets.A_KEY.env",
      "environment variable's name",
    ],
    [
      [...MCP, "[secrets.A_KEY]", 'env = "A"', "[secrets.B_KEY]", 'env = "A"'],
      6,
      "secrets.B_KEY.env",
      "is given to another secret",
    ],
    [[...MCP, "[secrets.A_KEY]", 'file = "keys/a"'], 4, "secrets.A_KEY.file", "no /"],
    [[...MCP, "[secrets.A_KEY]", 'file = ".."'], 4, "secrets.A_KEY.file", "may not be . or .."],
    [
      [...MCP, "[secrets.A_KEY]", 'file = "a"', "[secrets.B_KEY]", 'file = "a"'],
      6,
      "secrets.B_KEY.file",
      "is given to another secret",
    ],
    [
      [...MCP, "[secrets.A_KEY]", "arg = false"],
      4,
      "secrets.A_KEY.arg",
      "must be true or left out",
    ],
    [
      [...MCP, "[secrets.A_KEY]", 'env = "A"', 'enabled = "no"'],
      5,
      "secrets.A_KEY.enabled",
      "expected boolean",
    ],
  ]);
});

Deno.test("mcp secrets: env may not take over a variable the box sets or one that changes loading or trust", async () => {
  const refused = [
    "PATH",
    "HOME",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "NODE_OPTIONS",
    "NODE_EXTRA_CA_CERTS",
    "HTTPS_PROXY",
    "SSL_CERT_FILE",
    "PYTHONPATH",
    "BASH_ENV",
    "GIT_SSH_COMMAND",
    "DENO_CERT",
  ];
  await refusesEach(refused.map((name): Case => [
    [...MCP, "[secrets.A_KEY]", `env = "${name}"`],
    4,
    "secrets.A_KEY.env",
    `${name} is a variable the box sets, or one that changes how a program loads`,
  ]));
  const ok = await accepted([...MCP, "[secrets.A_KEY]", 'env = "PATHWAY_TOKEN"']);
  assertEquals(ok.secrets.get("A_KEY")?.delivery, { kind: "env", name: "PATHWAY_TOKEN" });
});

Deno.test("mcp secrets: an arg secret has its whole-element placeholder in command, and each placeholder an arg secret", async () => {
  await refusesEach([
    [
      ['kind = "mcp"', 'command = ["srv"]', "[secrets.DB_URL]", "arg = true"],
      4,
      "secrets.DB_URL.arg",
      'command has no element "{DB_URL}"',
    ],
    [
      ['kind = "mcp"', 'command = ["srv", "{DB_URL}"]'],
      2,
      "command.1",
      "{DB_URL} is not a secret declared in [secrets]",
    ],
    [
      ['kind = "mcp"', 'command = ["srv", "{DB_URL}"]', "[secrets.DB_URL]", 'env = "DB"'],
      2,
      "command.1",
      "{DB_URL} is a secret without arg = true",
    ],
    [
      ['kind = "mcp"', 'command = ["srv", "--db={DB_URL}"]', "[secrets.DB_URL]", "arg = true"],
      2,
      "command.1",
      "a placeholder must be the whole element",
    ],
  ]);
  const ok = await accepted([
    'kind = "mcp"',
    'command = ["srv", "{DB_URL}", "--flag", "{DB_URL}"]',
    "[secrets.DB_URL]",
    "arg = true",
  ]);
  assertEquals(ok.kind === "mcp" && ok.command.slice(1), ["{DB_URL}", "--flag", "{DB_URL}"]);
});

Deno.test("tools: a box verb as the key, cost_cents a whole number 0 to 100000000, description 1 to 2000", async () => {
  await refusesEach([
    [[...MCP, "[tools.CreateIssue]"], 3, "tools.CreateIssue", "is not a tool verb"],
    [[...MCP, "[tools.create-issue]"], 3, "tools.create-issue", "is not a tool verb"],
    [[...MCP, "[tools.a]", "cost_cents = -1"], 4, "tools.a.cost_cents", ">=0"],
    [[...MCP, "[tools.a]", "cost_cents = 1.5"], 4, "tools.a.cost_cents", "expected int"],
    [[...MCP, "[tools.a]", "cost_cents = 100000001"], 4, "tools.a.cost_cents", "<=100000000"],
    [[...MCP, "[tools.a]", 'description = ""'], 4, "tools.a.description", ">=1"],
    [
      [...MCP, "[tools.a]", `description = "${"d".repeat(2001)}"`],
      4,
      "tools.a.description",
      "<=2000",
    ],
  ]);
  const ok = await accepted([
    ...MCP,
    "[tools.a]",
    "cost_cents = 100000000",
    `description = "${"d".repeat(2000)}"`,
  ]);
  assertEquals(ok.tools.get("a"), { costCents: 100_000_000, description: "d".repeat(2000) });
});

Deno.test("secrets and headers hold at most 64 entries and tools 1000, the first one past refused at its line", async () => {
  const secrets = Array.from({ length: 65 }, (_, i) => [`[secrets.K${i}]`, `env = "E${i}"`]).flat();
  const headers = Array.from({ length: 65 }, (_, i) => `X-${i} = "v"`);
  const tools = Array.from({ length: 1001 }, (_, i) => `[tools.t${i}]`);
  await refusesEach([
    [[...MCP, ...secrets], 131, "secrets.K64", "one more than the 64 entries"],
    [[...HTTP, "[headers]", ...headers], 68, "headers.X-64", "one more than the 64 entries"],
    [[...MCP, ...tools], 1003, "tools.t1000", "one more than the 1000 entries"],
  ]);
  const ok = await accepted([...MCP, ...secrets.slice(0, 128), ...tools.slice(0, 1000)]);
  assertEquals([ok.secrets.size, ok.tools.size], [64, 1000]);
  const http = await accepted([...HTTP, "[headers]", ...headers.slice(0, 64)]);
  assertEquals(http.kind === "mcp-http" && http.headers.length, 64);
});

Deno.test("ports: host:port for mcp and module, port written, no wildcard, each port once, 1024 up, not the proxy's", async () => {
  await refusesEach([
    [[...HTTP, 'ports = ["127.0.0.1:5432"]'], 3, "ports", 'is not for kind = "mcp-http"'],
    [[...MCP, 'ports = ["db.example.org"]'], 3, "ports.0", "has no port"],
    [[...MCP, 'ports = ["*.example.org:5432"]'], 3, "ports.0", "is a wildcard"],
    [[...MCP, 'ports = ["db:99999"]'], 3, "ports.0", "not a number from 1 to 65535"],
    [[...MCP, 'ports = ["127.0.0.1:3128"]'], 3, "ports.0", "the port of the app's egress proxy"],
    [[...MCP, 'ports = ["db.example:5432", "web.example:443"]'], 3, "ports.1", "is below 1024"],
    [
      [...MCP, 'ports = ["a.example:5432", "b.example:5432"]'],
      3,
      "ports.1",
      "uses port 5432 again",
    ],
  ]);
  assertEquals((await accepted([...MODULE, 'ports = ["DB.example.org:5432"]'])).ports, [
    { host: "db.example.org", port: 5432 },
  ]);
});

Deno.test("[env]: plain variables for mcp only, no box or loader name, no secret's name, no placeholder but {HOME}", async () => {
  await refusesEach([
    [[...MODULE, "[env]", 'A = "1"'], 3, "env", 'is only for kind = "mcp"'],
    [[...MCP, "[env]", 'LD_PRELOAD = "/x.so"'], 4, "env.LD_PRELOAD", "(LD_*)"],
    [[...MCP, "[env]", 'HOME = "/"'], 4, "env.HOME", "(HOME)"],
    [[...MCP, "[env]", 'GURT_APP_NAME = "x"'], 4, "env.GURT_APP_NAME", "(GURT_*)"],
    [[...MCP, "[env]", 'lower = "x"'], 4, "env.lower", "must be an environment variable's name"],
    [[...MCP, "[env]", 'A = "one\\ntwo"'], 4, "env.A", "holds a control character"],
    [
      [...MCP, "[env]", 'TOKEN = "{GH_TOKEN}"', "[secrets.GH_TOKEN]", 'env = "GH"'],
      4,
      "env.TOKEN",
      "holds {GH_TOKEN}, which is not replaced",
    ],
    [
      [...MCP, "[env]", 'GH = "x"', "[secrets.GH_TOKEN]", 'env = "GH"'],
      4,
      "env.GH",
      "is given to a secret in [secrets]",
    ],
    [[...MCP, "[secrets.K]", 'env = "GURT_ARG_K"'], 4, "secrets.K.env", "(GURT_*)"],
  ]);
  const manifest = await accepted([...MCP, "[env]", 'MEMORY_FILE_PATH = "{HOME}/m.jsonl"']);
  assertEquals(manifest.kind === "mcp" && [...manifest.env], [
    ["MEMORY_FILE_PATH", "{HOME}/m.jsonl"],
  ]);
});

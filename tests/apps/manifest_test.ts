/**
 * An app's manifest as gurt reads it: one good manifest of each kind to the exact object, the
 * paths in the app's folder (.. and symlinks out of it), the file itself (symlinked, writable by
 * others, not UTF-8), the app's name, and the hash. The rules between keys are in
 * manifest_rules_test.ts.
 */
import {
  APP_NAME,
  type AppManifest,
  appNameProblem,
  type AppSecret,
  manifestHash,
  parseManifest,
  readManifest,
} from "../../mod/apps/manifest.ts";
import { ConfigError } from "../../mod/config/mod.ts";
import { isKeyName } from "../../mod/vault/mod.ts";
import { APP_NAME as VAULT_APP_NAME } from "../../mod/vault/names.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { appFolder, assertRefused, removeFolder } from "./manifest_kit.ts";

/** The SHA-256 of `text`'s UTF-8 bytes by Web Crypto, not by the code under test. */
async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

Deno.test("a kind = mcp manifest reads to its exact object: ./ program resolved, each secret's way, tools", async () => {
  const folder = await appFolder({ "bin/server": { text: "#!/bin/sh\n", mode: 0o755 } });
  const text = [
    'kind = "mcp"',
    'description = "GitHub issues"',
    "enabled = false",
    'start = "eager"',
    'command = ["./bin/server", "--db", "{DB_URL}", "--verbose"]',
    'hosts = ["api.github.com", "*.example.org:8443"]',
    'ports = ["127.0.0.1:5432", "db.example.org:6379", "[::1]:8080"]',
    "[env]",
    'MEMORY_FILE_PATH = "{HOME}/memory.jsonl"',
    'LOG_LEVEL = "debug"',
    "[secrets.GITHUB_TOKEN]",
    'env = "GITHUB_PERSONAL_ACCESS_TOKEN"',
    "[secrets.CA_KEY]",
    'file = "ca.pem"',
    "enabled = false",
    "[secrets.DB_URL]",
    "arg = true",
    "[tools.create_issue]",
    "cost_cents = 5",
    'description = "Opens an issue."',
    "[tools.list_issues]",
  ].join("\n");
  try {
    const real = await Deno.realPath(folder);
    const manifest = parseManifest(`${folder}/app.toml`, text, folder);
    const expected: AppManifest = {
      kind: "mcp",
      description: "GitHub issues",
      enabled: false,
      start: "eager",
      command: [`${real}/bin/server`, "--db", "{DB_URL}", "--verbose"],
      hosts: ["api.github.com", "*.example.org:8443"],
      ports: [
        { host: "127.0.0.1", port: 5432 },
        { host: "db.example.org", port: 6379 },
        { host: "::1", port: 8080 },
      ],
      env: new Map([["MEMORY_FILE_PATH", "{HOME}/memory.jsonl"], ["LOG_LEVEL", "debug"]]),
      secrets: new Map<string, AppSecret>([
        ["GITHUB_TOKEN", {
          delivery: { kind: "env", name: "GITHUB_PERSONAL_ACCESS_TOKEN" },
          enabled: true,
        }],
        ["CA_KEY", { delivery: { kind: "file", name: "ca.pem" }, enabled: false }],
        ["DB_URL", { delivery: { kind: "arg" }, enabled: true }],
      ]),
      tools: new Map([
        ["create_issue", { costCents: 5, description: "Opens an issue." }],
        ["list_issues", {}],
      ]),
      folder: real,
      file: `${folder}/app.toml`,
      hash: await sha256(text),
    };
    assertEquals(manifest, expected);
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("a kind = mcp manifest with a bare program keeps it as written, with every default", async () => {
  const folder = await appFolder();
  const text =
    'kind = "mcp"\ncommand = ["npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31"]\n';
  try {
    const manifest = parseManifest(`${folder}/app.toml`, text, folder);
    assertEquals(manifest, {
      kind: "mcp",
      enabled: true,
      start: "lazy",
      command: ["npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31"],
      hosts: [],
      ports: [],
      env: new Map(),
      secrets: new Map(),
      tools: new Map(),
      folder: await Deno.realPath(folder),
      file: `${folder}/app.toml`,
      hash: await sha256(text),
    });
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("a kind = mcp-http manifest reads to its exact object: literal and secret headers, format's default", async () => {
  const folder = await appFolder();
  const text = [
    'kind = "mcp-http"',
    'url = "https://mcp.example.com/mcp"',
    "[headers]",
    'Authorization = { secret = "LINEAR_API_KEY", format = "Bearer {}" }',
    'X-Plain = "text"',
    'X-Key = { secret = "OTHER_KEY" }',
    "[secrets.LINEAR_API_KEY]",
    "[secrets.OTHER_KEY]",
    "enabled = false",
  ].join("\n");
  try {
    assertEquals(parseManifest(`${folder}/app.toml`, text, folder), {
      kind: "mcp-http",
      enabled: true,
      start: "lazy",
      url: "https://mcp.example.com/mcp",
      headers: [
        { name: "Authorization", secret: "LINEAR_API_KEY", format: "Bearer {}" },
        { name: "X-Plain", value: "text" },
        { name: "X-Key", secret: "OTHER_KEY", format: "{}" },
      ],
      hosts: [],
      ports: [],
      secrets: new Map<string, AppSecret>([
        ["LINEAR_API_KEY", { delivery: { kind: "none" }, enabled: true }],
        ["OTHER_KEY", { delivery: { kind: "none" }, enabled: false }],
      ]),
      tools: new Map(),
      folder: await Deno.realPath(folder),
      file: `${folder}/app.toml`,
      hash: await sha256(text),
    });
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("a kind = module manifest reads to its exact object, the module resolved in the folder", async () => {
  const folder = await appFolder({ "src/app.ts": { text: "export const tools = [];\n" } });
  const text = [
    'kind = "module"',
    'module = "./src/app.ts"',
    'hosts = ["api.example.com"]',
    "[secrets.STRIPE_KEY]",
    "[tools.spend]",
    "cost_cents = 0",
  ].join("\n");
  try {
    const real = await Deno.realPath(folder);
    assertEquals(parseManifest(`${folder}/app.toml`, text, folder), {
      kind: "module",
      enabled: true,
      start: "lazy",
      module: `${real}/src/app.ts`,
      hosts: ["api.example.com"],
      ports: [],
      secrets: new Map<string, AppSecret>([["STRIPE_KEY", {
        delivery: { kind: "none" },
        enabled: true,
      }]]),
      tools: new Map([["spend", { costCents: 0 }]]),
      folder: real,
      file: `${folder}/app.toml`,
      hash: await sha256(text),
    });
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("a symlink that stays inside the folder is followed to the real file (npm's node_modules/.bin)", async () => {
  const folder = await appFolder({ "node_modules/pkg/server.js": { text: "", mode: 0o755 } });
  try {
    await Deno.mkdir(`${folder}/node_modules/.bin`);
    await Deno.symlink("../pkg/server.js", `${folder}/node_modules/.bin/server`);
    const manifest = parseManifest(
      `${folder}/app.toml`,
      'kind = "mcp"\ncommand = ["./node_modules/.bin/server"]\n',
      folder,
    );
    assert(manifest.kind === "mcp");
    assertEquals(manifest.command, [`${await Deno.realPath(folder)}/node_modules/pkg/server.js`]);
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("command[0] and module may not leave the folder by .., even to a file that exists", async () => {
  const folder = await appFolder();
  const outside = `${folder}/../outside`;
  await Deno.writeTextFile(`${outside}.ts`, "");
  await Deno.writeTextFile(outside, "#!/bin/sh\n");
  await Deno.chmod(outside, 0o755);
  try {
    assertRefused(folder, ['kind = "mcp"', 'command = ["./../outside"]'], {
      line: 2,
      key: "command.0",
      problem: "may not hold a .. segment",
    });
    assertRefused(folder, ['kind = "module"', 'module = "../outside.ts"'], {
      line: 2,
      key: "module",
      problem: "may not hold a .. segment",
    });
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("command[0] and module may not leave the folder through a symlink", async () => {
  const folder = await appFolder();
  const elsewhere = `${folder}/../elsewhere`;
  await Deno.mkdir(elsewhere);
  await Deno.writeTextFile(`${elsewhere}/tool`, "#!/bin/sh\n");
  await Deno.chmod(`${elsewhere}/tool`, 0o755);
  await Deno.writeTextFile(`${elsewhere}/app.ts`, "");
  await Deno.symlink(elsewhere, `${folder}/lib`);
  await Deno.symlink(`${elsewhere}/app.ts`, `${folder}/app.ts`);
  try {
    assertRefused(folder, ['kind = "mcp"', 'command = ["./lib/tool"]'], {
      line: 2,
      key: "command.0",
      problem: "leads outside the app's folder through a symlink",
    });
    assertRefused(folder, ['kind = "module"', 'module = "app.ts"'], {
      line: 2,
      key: "module",
      problem: "leads outside the app's folder through a symlink",
    });
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("a ./ program must exist, be a file and be executable; a module must exist", async () => {
  const folder = await appFolder({ "plain": { text: "", mode: 0o644 }, "dir/x": { text: "" } });
  try {
    const cases: [string, string][] = [
      ["./missing", "missing does not exist in the app's folder"],
      ["./plain", "plain is not executable"],
      ["./dir", "dir is not a regular file"],
    ];
    for (const [program, problem] of cases) {
      assertRefused(folder, ['kind = "mcp"', `command = ["${program}"]`], {
        line: 2,
        key: "command.0",
        problem,
      });
    }
    assertRefused(folder, ['kind = "module"', 'module = "gone.ts"'], {
      line: 2,
      key: "module",
      problem: "gone.ts does not exist",
    });
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("readManifest reads folder/app.toml to what parseManifest makes of its text", async () => {
  const text = 'kind = "mcp"\ncommand = ["npx", "-y", "pkg@1.0.0"]\ndescription = "café"\n';
  const folder = await appFolder({ "app.toml": { text, mode: 0o600 } });
  try {
    const manifest = await readManifest(folder);
    assertEquals(manifest, parseManifest(`${folder}/app.toml`, text, folder));
    assertEquals(manifest.hash, await sha256(text));
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("readManifest refuses a symlinked app.toml, even to a good manifest in the folder", async () => {
  const folder = await appFolder({ "real.toml": { text: 'kind = "mcp"\ncommand = ["npx"]\n' } });
  try {
    await Deno.symlink(`${folder}/real.toml`, `${folder}/app.toml`);
    const error = await assertRejects(() => readManifest(folder), ConfigError, "is a symlink");
    assertStringIncludes(error.message, `${folder}/app.toml: is a symlink`);
    assertStringIncludes(error.message, "see runbook.md#app-manifest-invalid");
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("readManifest refuses an app.toml or a folder that its group or everyone may write", async () => {
  const good = 'kind = "mcp"\ncommand = ["npx"]\n';
  const folder = await appFolder({ "app.toml": { text: good, mode: 0o664 } });
  try {
    await assertRejects(() => readManifest(folder), ConfigError, "is writable by its group");
    await Deno.chmod(`${folder}/app.toml`, 0o646);
    await assertRejects(() => readManifest(folder), ConfigError, "mode 646");
    await Deno.chmod(`${folder}/app.toml`, 0o644);
    await Deno.chmod(folder, 0o777);
    const error = await assertRejects(() => readManifest(folder), ConfigError, "app's folder");
    assertStringIncludes(error.message, "mode 777");
    await Deno.chmod(folder, 0o755);
    assertEquals((await readManifest(folder)).kind, "mcp");
  } finally {
    await removeFolder(folder);
  }
});

Deno.test({
  name: "readManifest refuses an app.toml owned by another user (not root, not this user)",
  ignore: Deno.uid() !== 0,
  fn: async () => {
    const folder = await appFolder({ "app.toml": { text: 'kind = "mcp"\ncommand = ["npx"]\n' } });
    try {
      assertEquals((await readManifest(folder)).kind, "mcp");
      await Deno.chown(`${folder}/app.toml`, 54321, 54321);
      await assertRejects(() => readManifest(folder), ConfigError, "owned by uid 54321");
    } finally {
      await removeFolder(folder);
    }
  },
});

Deno.test("readManifest refuses a missing, non-regular, non-UTF-8 or oversized app.toml", async () => {
  const folder = await appFolder();
  const file = `${folder}/app.toml`;
  try {
    await assertRejects(() => readManifest(folder), ConfigError, `${file}: cannot be read`);
    await Deno.mkdir(file);
    await assertRejects(() => readManifest(folder), ConfigError, "is not a regular file");
    await Deno.remove(file);
    await Deno.writeFile(file, new Uint8Array([0x6b, 0x69, 0x6e, 0x64, 0xff, 0x0a]));
    await assertRejects(() => readManifest(folder), ConfigError, "is not UTF-8");
    await Deno.writeTextFile(file, `kind = "mcp"\ncommand = ["npx"]\n#${"x".repeat(300_000)}\n`);
    await assertRejects(() => readManifest(folder), ConfigError, "a manifest may hold at most");
  } finally {
    await removeFolder(folder);
  }
});

Deno.test("TOML that does not parse is refused with its line", async () => {
  const folder = await appFolder();
  try {
    const error = assertRefusedSyntax(folder, 'kind = "mcp"\ncommand = ["npx"\nhosts = []\n');
    assertEquals(error.line, 3);
  } finally {
    await removeFolder(folder);
  }
});

function assertRefusedSyntax(folder: string, text: string): ConfigError {
  try {
    parseManifest(`${folder}/app.toml`, text, folder);
  } catch (error) {
    assert(error instanceof ConfigError, String(error));
    assertStringIncludes(error.message, `${folder}/app.toml:${error.line}: not valid TOML: `);
    assert(error.message.endsWith("; see runbook.md#app-manifest-invalid"), error.message);
    return error;
  }
  throw new Error("expected a ConfigError");
}

Deno.test("manifestHash is the SHA-256 of the text's UTF-8 bytes, and of the same bytes given raw", async () => {
  const text = 'kind = "module"\nmodule = "app.ts"\ndescription = "naïve ✓"\n';
  assertEquals(manifestHash(text), await sha256(text));
  assertEquals(manifestHash(new TextEncoder().encode(text)), await sha256(text));
  assert(manifestHash(text) !== manifestHash(`${text} `));
});

Deno.test("an app's name is lower case, digits and -, 1 to 32, and neither example nor a built-in tool", () => {
  assertEquals(APP_NAME.source, VAULT_APP_NAME.source);
  for (const name of ["github", "a", "my-app-2", "a".repeat(32)]) {
    assertEquals(appNameProblem(name), null, name);
  }
  for (const name of ["", "GitHub", "2fa", "-x", "my_app", "a.b", "a".repeat(33)]) {
    assertStringIncludes(appNameProblem(name) ?? "", "is not an app name", name);
  }
  assertStringIncludes(appNameProblem("example") ?? "", "built-in example app");
  assertStringIncludes(appNameProblem("shell") ?? "", "built-in tool");
});

Deno.test("a secret's name in [secrets] is what the vault takes as a key name", async () => {
  const folder = await appFolder();
  try {
    const names = ["A", "GITHUB_TOKEN", "K9", `A${"B".repeat(127)}`, `A${"B".repeat(128)}`];
    for (const name of [...names, "lower", "9A", "_A", "A-B"]) {
      const text = `kind = "module"\nmodule = "m.ts"\n[secrets.${name}]\n`;
      let accepted = true;
      try {
        parseManifest(`${folder}/app.toml`, text, folder);
      } catch (error) {
        assert(error instanceof ConfigError, String(error));
        // The module does not exist: a name that passed reaches that check.
        accepted = error.key === "module";
      }
      assertEquals(accepted, isKeyName(name), name);
    }
  } finally {
    await removeFolder(folder);
  }
});

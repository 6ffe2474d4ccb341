/**
 * docs/credentials.md#when-the-rules-are-invalid: the credentials folder read from real files; an
 * absent folder is no rules, and one invalid file makes the whole load invalid.
 */
import { credentialsInvalidReport, loadCredentialRules } from "../../mod/credentials/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";

const GITHUB =
  'host = "github.com"\nsecret = "GITHUB_TOKEN"\nbasic = { user = "x-access-token" }\n';
const API =
  'host = "api.github.com"\nsecret = "GITHUB_TOKEN"\nheader = "Authorization: Bearer {}"\n';

Deno.test("the rules of a folder load by id; files not ending .toml are not read", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/github.toml`, GITHUB);
    await Deno.writeTextFile(`${dir}/gh-api.toml`, API);
    await Deno.writeTextFile(`${dir}/notes.txt`, "not a rule");
    const load = await loadCredentialRules(dir);
    assert(load.ok, JSON.stringify(load));
    assertEquals([...load.rules.keys()].sort(), ["gh-api", "github"]);
    assertEquals(load.rules.get("github")!.file, `${dir}/github.toml`);
    assertEquals(load.rules.get("gh-api")!.host, "api.github.com");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an absent credentials folder is no rules", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const load = await loadCredentialRules(`${dir}/credentials`);
    assert(load.ok, JSON.stringify(load));
    assertEquals(load.rules.size, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("one invalid file makes the whole load invalid, with its file, line and field", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/github.toml`, GITHUB);
    await Deno.writeTextFile(
      `${dir}/bad.toml`,
      'host = "a.example"\nsecret = "K"\nport = 0\nquery = "t"\n',
    );
    const load = await loadCredentialRules(dir);
    assert(!load.ok, "one bad file must make the load invalid");
    assertEquals(load.problems, [{
      file: `${dir}/bad.toml`,
      line: 3,
      problem: "port: must be an integer from 1 to 65535",
    }]);
    const report = credentialsInvalidReport(load.problems);
    assertStringIncludes(report, `${dir}/bad.toml:3: port:`);
    assertStringIncludes(report, "every credentialed request is refused");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a rule file that cannot be read (a dangling link) makes the load invalid", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/github.toml`, GITHUB);
    await Deno.symlink(`${dir}/nowhere`, `${dir}/gone.toml`);
    const load = await loadCredentialRules(dir);
    assert(!load.ok);
    assertEquals(load.problems.length, 1);
    assertEquals(load.problems[0].file, `${dir}/gone.toml`);
    assertStringIncludes(load.problems[0].problem, "the file cannot be read");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a credentials path that is a file, not a folder, makes the load invalid", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/credentials`, "");
    const load = await loadCredentialRules(`${dir}/credentials`);
    assert(!load.ok);
    assertStringIncludes(load.problems[0].problem, "the credentials directory cannot be read");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

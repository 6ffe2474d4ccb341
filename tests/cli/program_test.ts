import { assertEquals, assertStringIncludes } from "../assert.ts";
import denoJson from "../../deno.json" with { type: "json" };
import { gurt, withHome } from "../kit/mod.ts";

Deno.test("gurt --version prints the version from deno.json, the checkout it runs from and Deno's version", async () => {
  const run = await gurt(["--version"]);
  const checkout = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
  assertEquals(
    [run.code, run.stdout.trim()],
    [0, `gurt ${denoJson.version} (checkout ${checkout}, deno ${Deno.version.deno})`],
  );
});

Deno.test("gurt --help lists the subcommands", async () => {
  const run = await gurt(["--help"]);
  assertEquals(run.code, 0);
  assertStringIncludes(run.stdout, "config");
});

Deno.test("a subcommand's --help names --home, and task start's --model names BOX_MODEL", async () => {
  const serve = await gurt(["serve", "--help"]);
  assertEquals(serve.code, 0);
  assertStringIncludes(serve.stdout, "--home <dir>");
  const start = await gurt(["task", "start", "--help"]);
  assertStringIncludes(start.stdout.replace(/\s+/g, " "), "BOX_MODEL in gurt serve's environment");
});

Deno.test("gurt config on a home with an unknown key exits 1 naming file, line and key", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(`${home}/gurt.toml`, "[approvals]\nttl_ms = 5\nttl_mz = 3\n");
    const run = await gurt(["--home", home, "config"]);
    assertEquals(run.code, 1);
    assertEquals(
      run.stderr.trim(),
      `${home}/gurt.toml:3: approvals.ttl_mz: unknown key; see runbook.md#config-invalid`,
    );
  });
});

Deno.test("gurt config prints the defaults and the overrides in effect", async () => {
  await withHome(async (home) => {
    const run = await gurt(["config"], {
      env: {
        BOX_HOME: home,
        BOX_VAULT: `${home}/v.env`,
        BOX_APPROVAL_WAIT_MS: "1234",
        BOX_MODEL: "claude-opus-4-5",
      },
    });
    assertEquals(run.code, 0, run.stderr);
    assertStringIncludes(run.stdout, `# box home: ${home}`);
    assertStringIncludes(run.stdout, `# vault: ${home}/v.env`);
    assertStringIncludes(run.stdout, "wait_ms = 1234");
    assertStringIncludes(
      run.stdout,
      "# approvals.wait_ms: from BOX_APPROVAL_WAIT_MS, over gurt.toml",
    );
    assertStringIncludes(run.stdout, 'model = "claude-opus-4-5"');
    assertStringIncludes(run.stdout, "# models.model: from BOX_MODEL, over gurt.toml");
  });
});

Deno.test("gurt serve on a home whose provider names an unknown api exits 1 naming file, line and field", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(
      `${home}/gurt.toml`,
      '[models.providers.groq]\nbase_url = "https://api.groq.com/openai/v1"\napi = "chat"\nkey = "GROQ_API_KEY"\n',
    );
    const run = await gurt(["--home", home, "serve"]);
    assertEquals(run.code, 1, run.stdout + run.stderr);
    assertStringIncludes(
      run.stderr,
      `${home}/gurt.toml:3: models.providers.groq.api: must be one of "anthropic", "openai-responses", "openai-chat"; see runbook.md#config-invalid`,
    );
  });
});

/** gurt.toml's [models] table: its defaults, the values it refuses, and the keys it no longer reads. */
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { ConfigError, parseConfig } from "../../mod/config/mod.ts";

Deno.test("[models] defaults to claude-sonnet-5-5 and each service's own origin", () => {
  assertEquals(parseConfig("g.toml", "").models, {
    model: "claude-sonnet-5-5",
    max_tokens: 4096,
    max_turns: 50,
    anthropic_base_url: "https://api.anthropic.com",
    openai_base_url: "https://api.openai.com",
    factory_base_url: "https://api.factory.ai",
    providers: {},
    prices: {},
  });
});

Deno.test("[models] names the services a task's model endpoint reaches, each an origin without a path", () => {
  const config = parseConfig(
    "g.toml",
    '[models]\nanthropic_base_url = "http://127.0.0.1:9001"\nopenai_base_url = "https://llm.lan"\n' +
      'factory_base_url = "http://127.0.0.1:9002"\n',
  );
  assertEquals(config.models.anthropic_base_url, "http://127.0.0.1:9001");
  assertEquals(config.models.openai_base_url, "https://llm.lan");
  assertEquals(config.models.factory_base_url, "http://127.0.0.1:9002");
  for (
    const [line, key] of [
      ['openai_base_url = "https://api.openai.com/v1"', "models.openai_base_url"],
      ['anthropic_base_url = "api.anthropic.com"', "models.anthropic_base_url"],
      ['factory_base_url = "https://api.factory.ai/api"', "models.factory_base_url"],
      ['factory_base_url = "https://api.factory.ai?x=1"', "models.factory_base_url"],
    ]
  ) {
    const error = assertThrows(() => parseConfig("g.toml", `[models]\n${line}\n`), ConfigError);
    assertEquals([error.line, error.key], [2, key]);
    assertStringIncludes(error.message, "must be an http or https origin with no path");
  }
});

Deno.test("[models] kind, base_url and key are refused, each with its line, what to write instead and its runbook entry", () => {
  const cases = [
    {
      line: 'kind = "openai"',
      key: "models.kind",
      says: "the service comes from the model's name: claude-* models go to Anthropic",
    },
    {
      line: 'base_url = "http://127.0.0.1:8080"',
      key: "models.base_url",
      says:
        "a task's model endpoint relays Anthropic requests to [models] anthropic_base_url and OpenAI ones to openai_base_url; write those instead",
    },
    {
      line: 'key = ""',
      key: "models.key",
      says: "the model endpoint puts the vault's ANTHROPIC_API_KEY on Anthropic requests",
    },
  ];
  for (const { line, key, says } of cases) {
    const text = `[models]\nmodel = "gpt-5"\n${line}\n`;
    const error = assertThrows(() => parseConfig("/h/gurt.toml", text), ConfigError);
    assertEquals([error.file, error.line, error.key], ["/h/gurt.toml", 3, key], line);
    assertStringIncludes(error.message, `/h/gurt.toml:3: ${key}: no longer read;`);
    assertStringIncludes(error.message, says);
    assert(error.message.endsWith("; see runbook.md#models-config"), error.message);
    assert(!error.message.includes("config-invalid"), error.message);
  }
});

Deno.test("an old [models] key is named before any other problem of the table, and in an inline table", () => {
  const text = '[models]\nmax_tokens = "many"\nbase_url = "https://api.anthropic.com"\n';
  const error = assertThrows(() => parseConfig("g.toml", text), ConfigError);
  assertEquals([error.line, error.key], [3, "models.base_url"]);
  const inline = 'models = { key = "ANTHROPIC_API_KEY" }\n';
  const second = assertThrows(() => parseConfig("g.toml", inline), ConfigError);
  assertEquals([second.line, second.key], [1, "models.key"]);
});

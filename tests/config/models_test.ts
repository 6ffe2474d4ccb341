/** gurt.toml's [models] table: its defaults, and the values it refuses. */
import { assertEquals, assertThrows } from "../assert.ts";
import { ConfigError, parseConfig } from "../../mod/config/mod.ts";

Deno.test("[models] defaults to Anthropic's service, claude-sonnet-5-5 and the vault key ANTHROPIC_API_KEY", () => {
  assertEquals(parseConfig("g.toml", "").models, {
    kind: "anthropic",
    base_url: "https://api.anthropic.com",
    model: "claude-sonnet-5-5",
    key: "ANTHROPIC_API_KEY",
    max_tokens: 4096,
    max_turns: 50,
    anthropic_base_url: "https://api.anthropic.com",
    openai_base_url: "https://api.openai.com",
  });
});

Deno.test("[models] names the services a task's model endpoint reaches, each an origin without a path", () => {
  const config = parseConfig(
    "g.toml",
    '[models]\nanthropic_base_url = "http://127.0.0.1:9001"\nopenai_base_url = "https://llm.lan"\n',
  );
  assertEquals(config.models.anthropic_base_url, "http://127.0.0.1:9001");
  assertEquals(config.models.openai_base_url, "https://llm.lan");
  assertThrows(
    () => parseConfig("g.toml", '[models]\nopenai_base_url = "https://api.openai.com/v1"\n'),
    ConfigError,
    "openai_base_url",
  );
});

Deno.test("[models] takes a local OpenAI-compatible server with no key", () => {
  const text = '[models]\nkind = "openai"\nbase_url = "http://127.0.0.1:8080"\nkey = ""\n';
  const models = parseConfig("g.toml", text).models;
  assertEquals([models.kind, models.base_url, models.key], ["openai", "http://127.0.0.1:8080", ""]);
});

Deno.test("[models] refuses an unknown kind, a URL with a query and a key name that is not one", () => {
  for (
    const [line, key] of [
      ['kind = "gemini"', "models.kind"],
      ['base_url = "https://api.example.com/?x=1"', "models.base_url"],
      ['key = "my key"', "models.key"],
    ]
  ) {
    assertThrows(() => parseConfig("g.toml", `[models]\n${line}\n`), ConfigError, key);
  }
});

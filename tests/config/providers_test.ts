/** gurt.toml's [models.providers.<name>]: what it takes, and each bad one refused with its line. */
import { assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { ConfigError, missingProviderKeys, parseConfig } from "../../mod/config/mod.ts";
import { loadConfig } from "../../mod/config/mod.ts";

const OPENROUTER = `[models.providers.openrouter]
base_url = "https://openrouter.ai/api/v1"
api = "openai-chat"
key = "OPENROUTER_API_KEY"
headers = { "X-Title" = "gurt", "X-Gateway" = { secret = "GATEWAY_TOKEN", format = "Token {secret}" } }
models = ["qwen3-coder", "llama-*"]
`;

Deno.test("a provider takes a base URL with its path and query, its API, its key, headers and models", () => {
  const azure = `[models.providers.azure]
base_url = "https://res.openai.azure.com/openai/deployments/dep?api-version=2024-10-21"
api = "openai-chat"
key = "AZURE_OPENAI_KEY"
key_header = "api-key"
`;
  const providers = parseConfig("g.toml", `${OPENROUTER}${azure}`).models.providers;
  assertEquals(providers.openrouter, {
    base_url: "https://openrouter.ai/api/v1",
    api: "openai-chat",
    key: "OPENROUTER_API_KEY",
    headers: {
      "X-Title": "gurt",
      "X-Gateway": { secret: "GATEWAY_TOKEN", format: "Token {secret}" },
    },
    models: ["qwen3-coder", "llama-*"],
  });
  assertEquals(
    providers.azure.base_url,
    "https://res.openai.azure.com/openai/deployments/dep?api-version=2024-10-21",
  );
  assertEquals(providers.azure.key_header, "api-key");
  assertEquals(parseConfig("g.toml", "").models.providers, {});
});

function refusal(text: string): ConfigError {
  return assertThrows(() => parseConfig("/home/o/gurt.toml", text), ConfigError);
}

Deno.test("a provider with an unknown api is refused naming the file, line and field", () => {
  const error = refusal(OPENROUTER.replace('api = "openai-chat"', 'api = "openai-completions"'));
  assertEquals([error.file, error.line, error.key], [
    "/home/o/gurt.toml",
    3,
    "models.providers.openrouter.api",
  ]);
  assertStringIncludes(error.message, '"anthropic", "openai-responses", "openai-chat"');
  assertStringIncludes(error.message, "see runbook.md#config-invalid");
});

Deno.test("a provider's base URL must be http or https, without credentials or a fragment", () => {
  for (
    const url of [
      "openrouter.ai/api/v1",
      "ftp://host/v1",
      "https://u:p@host/v1",
      "https://host/v1#x",
      "https://host /v1",
    ]
  ) {
    const error = refusal(OPENROUTER.replace("https://openrouter.ai/api/v1", url));
    assertEquals([error.line, error.key], [2, "models.providers.openrouter.base_url"], url);
  }
});

Deno.test("two providers claiming one model, by name or by prefix, are refused at the second's models line", () => {
  for (
    const [first, second] of [["qwen3-coder", "qwen3-coder"], ["llama-*", "llama-3.3-70b"], [
      "qwen*",
      "qwen3-*",
    ]]
  ) {
    const text = `${OPENROUTER.replace('["qwen3-coder", "llama-*"]', `["${first}"]`)}
[models.providers.local]
base_url = "http://127.0.0.1:11434/v1"
api = "openai-chat"
key = "OLLAMA_KEY"
models = ["${second}"]
`;
    const error = refusal(text);
    assertEquals(
      [error.line, error.key],
      [12, "models.providers.local.models"],
      `${first} ${second}`,
    );
    assertStringIncludes(error.message, "provider openrouter too");
  }
  // Apart, they are both taken.
  const apart =
    `${OPENROUTER}\n[models.providers.local]\nbase_url = "http://127.0.0.1:11434/v1"\napi = "openai-chat"\nkey = "K"\nmodels = ["qwen2*"]\n`;
  assertEquals(Object.keys(parseConfig("g.toml", apart).models.providers), ["openrouter", "local"]);
});

Deno.test("a provider may not take a built-in service's name, and its fields are strict", () => {
  const named = refusal(OPENROUTER.replace("providers.openrouter", "providers.openai"));
  assertStringIncludes(named.message, "built-in service's name");
  const unknown = refusal(
    OPENROUTER.replace('key = "OPENROUTER_API_KEY"', 'key = "OPENROUTER_API_KEY"\nkye = "x"'),
  );
  assertEquals([unknown.line, unknown.key], [5, "models.providers.openrouter.kye"]);
  const key = refusal(OPENROUTER.replace('key = "OPENROUTER_API_KEY"', 'key = "sk-or-v1-abc"'));
  assertEquals([key.line, key.key], [4, "models.providers.openrouter.key"]);
  const format = refusal(OPENROUTER.replace('format = "Token {secret}"', 'format = "Token"'));
  assertEquals(format.key, "models.providers.openrouter.headers.X-Gateway.format");
  const host = refusal(OPENROUTER.replace('"X-Title" = "gurt"', '"Host" = "evil.example"'));
  assertStringIncludes(host.message, "names a header the endpoint writes itself");
});

Deno.test("an origin with a path in openai_base_url says to write a provider instead", () => {
  const error = refusal('[models]\nopenai_base_url = "https://openrouter.ai/api/v1"\n');
  assertEquals([error.line, error.key], [2, "models.openai_base_url"]);
  assertStringIncludes(error.message, "[models.providers.<name>]");
  assertStringIncludes(error.message, "see runbook.md#models-config");
});

Deno.test("the vault keys a provider names and the vault lacks are each told with gurt.toml's line and field", async () => {
  const home = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${home}/gurt.toml`, OPENROUTER);
    const config = loadConfig({ home, env: {}, root: false });
    const missing = missingProviderKeys(config, (name) => name === "GATEWAY_TOKEN");
    assertEquals(missing.map((error) => [error.line, error.key]), [[
      4,
      "models.providers.openrouter.key",
    ]]);
    assertStringIncludes(
      missing[0].message,
      `${home}/gurt.toml:4: models.providers.openrouter.key: names the vault key OPENROUTER_API_KEY`,
    );
    assertStringIncludes(missing[0].message, "see runbook.md#provider-key-missing");
    const both = missingProviderKeys(config, () => false);
    assertEquals(both.map((error) => error.key), [
      "models.providers.openrouter.key",
      "models.providers.openrouter.headers",
    ]);
    assertEquals(missingProviderKeys(config, () => true), []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a provider's models entry that begins with a provider's name is refused: that name picks the provider first", () => {
  const text = `${OPENROUTER}
[models.providers.local]
base_url = "http://127.0.0.1:11434/v1"
api = "openai-chat"
key = "OLLAMA_KEY"
models = ["openrouter/qwen3"]
`;
  const error = refusal(text);
  assertEquals([error.line, error.key], [12, "models.providers.local.models"]);
  assertStringIncludes(error.message, "begins with provider openrouter's name");
});

/** gurt.toml's [models.prices."<model>"] and a provider's prices = "reported": taken, or refused. */
import { assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { ConfigError, parseConfig } from "../../mod/config/mod.ts";

Deno.test("[models.prices] takes a model's rates in dollars per million tokens, a cache rate absent at the input's", () => {
  const text = `[models.prices."qwen3-coder"]
input = 0
output = 0

[models.prices."gpt-4.1"]
input = 2.5
output = 10.125
cache_read = 0.00125
cache_write = 3
`;
  assertEquals(parseConfig("g.toml", text).models.prices, {
    "qwen3-coder": { input: 0, output: 0, cacheWrite: 0, cacheRead: 0 },
    "gpt-4.1": { input: 2.5, output: 10.125, cacheWrite: 3, cacheRead: 0.00125 },
  });
  const partial = parseConfig("g.toml", `[models.prices.llama3]\ninput = 0.2\noutput = 0.4\n`);
  assertEquals(partial.models.prices.llama3, {
    input: 0.2,
    output: 0.4,
    cacheWrite: 0.2,
    cacheRead: 0.2,
  });
  assertEquals(parseConfig("g.toml", "").models.prices, {});
});

function refusal(text: string): ConfigError {
  return assertThrows(() => parseConfig("/home/o/gurt.toml", text), ConfigError);
}

Deno.test("an unknown key in a model's price is refused at its file, line and field", () => {
  const error = refusal(`[models]
model = "x"

[models.prices."gpt-4.1"]
input = 2
output = 8
cached = 0.5
`);
  assertEquals([error.file, error.line, error.key], [
    "/home/o/gurt.toml",
    7,
    "models.prices.gpt-4.1.cached",
  ]);
  assertStringIncludes(error.message, "cached");
  assertStringIncludes(error.message, "see runbook.md#config-invalid");
});

Deno.test("a price without its output rate, a negative rate and one finer than a thousandth of a cent are refused with their line", () => {
  const missing = refusal(`[models.prices.m]\ninput = 1\n`);
  assertEquals([missing.line, missing.key], [1, "models.prices.m.output"]);
  const negative = refusal(`[models.prices.m]\ninput = -1\noutput = 1\n`);
  assertEquals([negative.line, negative.key], [2, "models.prices.m.input"]);
  assertStringIncludes(negative.message, "0 or more");
  const fine = refusal(`[models.prices.m]\ninput = 1\noutput = 0.000001\n`);
  assertEquals([fine.line, fine.key], [3, "models.prices.m.output"]);
  assertStringIncludes(fine.message, "five decimals");
  const text = refusal(`[models.prices.m]\ninput = "free"\noutput = 0\n`);
  assertEquals([text.line, text.key], [2, "models.prices.m.input"]);
});

Deno.test('a provider takes prices = "reported"; any other value is refused at its line', () => {
  const provider = (prices: string) =>
    `[models.providers.openrouter]
base_url = "https://openrouter.ai/api/v1"
api = "openai-chat"
key = "OPENROUTER_API_KEY"
prices = ${prices}
`;
  const parsed = parseConfig("g.toml", provider('"reported"'));
  assertEquals(parsed.models.providers.openrouter.prices, "reported");
  const error = refusal(provider('"owner"'));
  assertEquals([error.line, error.key], [5, "models.providers.openrouter.prices"]);
  assertStringIncludes(error.message, '"reported"');
});

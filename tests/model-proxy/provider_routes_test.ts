/** Which provider a model picks, what is sent as its model, and the URL a request goes to. */
import { assertEquals } from "../assert.ts";
import { providerOf, providerServes, providerUrl } from "../../mod/model-proxy/provider_routes.ts";

const PROVIDERS = [
  { name: "openrouter", models: [] },
  { name: "local", models: ["qwen3-coder", "llama-*", "openrouter-*"] },
];

Deno.test("a model's first segment names a provider, and the rest is sent; else a provider's models list it as it is", () => {
  const picked = (model: string) => {
    const found = providerOf(model, PROVIDERS);
    return found === null ? null : [found.provider.name, found.model];
  };
  assertEquals(picked("openrouter/anthropic/claude-sonnet-4.5"), [
    "openrouter",
    "anthropic/claude-sonnet-4.5",
  ]);
  assertEquals(picked("qwen3-coder"), ["local", "qwen3-coder"]);
  assertEquals(picked("llama-3.3-70b"), ["local", "llama-3.3-70b"]);
  // A name with nothing after it names no model; a listed prefix still matches it.
  assertEquals(picked("openrouter/"), null);
  assertEquals(picked("openrouter-x"), ["local", "openrouter-x"]);
  // Neither: a built-in service's.
  for (const model of ["claude-sonnet-4-5", "gpt-5", "qwen3", "anthropic/claude", "/x"]) {
    assertEquals(picked(model), null, model);
  }
});

Deno.test("a provider's URL is its base with the API's suffix, its query first and the request's after", () => {
  const cases: [string, Parameters<typeof providerUrl>[1], string, string][] = [
    [
      "https://openrouter.ai/api/v1",
      "chat_completions",
      "",
      "https://openrouter.ai/api/v1/chat/completions",
    ],
    [
      "https://g.example/v1beta/openai/",
      "chat_completions",
      "",
      "https://g.example/v1beta/openai/chat/completions",
    ],
    [
      "https://api.groq.com/openai/v1",
      "responses",
      "?x=1",
      "https://api.groq.com/openai/v1/responses?x=1",
    ],
    [
      "http://127.0.0.1:4000",
      "messages",
      "?beta=true",
      "http://127.0.0.1:4000/v1/messages?beta=true",
    ],
    [
      "https://gw.example/anthropic/",
      "count_tokens",
      "",
      "https://gw.example/anthropic/v1/messages/count_tokens",
    ],
    [
      "https://r.openai.azure.com/openai/deployments/d?api-version=2024-10-21",
      "chat_completions",
      "?api-version=1999&trace=1",
      "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21&trace=1",
    ],
  ];
  for (const [base, kind, search, url] of cases) assertEquals(providerUrl(base, kind, search), url);
});

Deno.test("each API takes only its own routes", () => {
  const kinds = ["messages", "count_tokens", "responses", "chat_completions"] as const;
  const served = (api: Parameters<typeof providerServes>[0]) =>
    kinds.filter((kind) => providerServes(api, kind));
  assertEquals(served("anthropic"), ["messages", "count_tokens"]);
  assertEquals(served("openai-responses"), ["responses"]);
  assertEquals(served("openai-chat"), ["chat_completions"]);
});

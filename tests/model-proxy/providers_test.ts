/**
 * The owner's providers ([models.providers.<name>]) reached through a task's model endpoint in a
 * real core: scripted fakes at base URLs with paths (OpenRouter's /api/v1, Groq's /openai/v1,
 * Gemini's /v1beta/openai/, an Azure deployment with api-version, an Anthropic gateway), each
 * sent the vault's key in the header it reads and never the task's placeholder.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startBox, type TestBox } from "../kit/mod.ts";
import {
  anthropicUsual,
  type FakeRequest,
  type FakeService,
  openaiUsual,
  startFakeService,
} from "./fake_services.ts";

const PLACEHOLDER = "gurt-placeholder-key";

const KEYS: Record<string, string> = {
  ANTHROPIC_API_KEY: "sk-ant-builtin-key-51",
  OPENROUTER_API_KEY: "sk-or-v1-router-key-42",
  GROQ_API_KEY: "gsk_groq-key-17",
  GEMINI_API_KEY: "gemini-key-AIza-99",
  AZURE_OPENAI_KEY: "azure-key-3f2e1d",
  GATEWAY_KEY: "gateway-key-8c7b",
  GATEWAY_TEAM_TOKEN: "team-token-6a5b",
};

/** A fake answering each API by its path's last part, wherever its base puts it. */
function startPathFake(): FakeService {
  return startFakeService((request: FakeRequest) => {
    const path = request.path.replace(/\?.*$/, "");
    if (path.endsWith("/v1/messages")) return anthropicUsual({ ...request, path: "/v1/messages" });
    if (path.endsWith("/responses")) return openaiUsual({ ...request, path: "/v1/responses" });
    return openaiUsual({ ...request, path: "/v1/chat/completions" });
  });
}

function toml(fake: string): string {
  return `[models]
anthropic_base_url = "${fake}"

[models.providers.openrouter]
base_url = "${fake}/api/v1"
api = "openai-chat"
key = "OPENROUTER_API_KEY"
headers = { "X-Title" = "gurt" }

[models.providers.groq]
base_url = "${fake}/openai/v1"
api = "openai-responses"
key = "GROQ_API_KEY"
models = ["llama-*"]

[models.providers.gemini]
base_url = "${fake}/v1beta/openai/"
api = "openai-chat"
key = "GEMINI_API_KEY"

[models.providers.azure]
base_url = "${fake}/openai/deployments/gpt-4o-dep?api-version=2024-10-21"
api = "openai-chat"
key = "AZURE_OPENAI_KEY"
key_header = "api-key"

[models.providers.gateway]
base_url = "${fake}/gateway"
api = "anthropic"
key = "GATEWAY_KEY"
headers = { "X-Team" = { secret = "GATEWAY_TEAM_TOKEN", format = "Team {secret}" } }

[models.providers.unkeyed]
base_url = "${fake}/unkeyed/v1"
api = "openai-chat"
key = "UNKEYED_API_KEY"
`;
}

async function withProviders(
  work: (run: { fake: FakeService; box: TestBox; socket: string }) => Promise<void>,
): Promise<void> {
  const fake = startPathFake();
  try {
    const box = await startBox({
      toml: toml(fake.url),
      core: { vault: { value: (name) => KEYS[name], names: () => Object.keys(KEYS) } },
    });
    try {
      const task = await box.startTask();
      await work({ fake, box, socket: `${box.home}/tasks/${task.id}/model.sock` });
    } finally {
      await box.close();
    }
  } finally {
    await fake.close();
  }
}

/** One request as a client inside the task sends it, with the placeholder key. */
async function send(
  socket: string,
  request: { path: string; body: unknown; anthropic?: boolean },
): Promise<{ status: number; text: string }> {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  try {
    const headers: Record<string, string> = request.anthropic === true
      ? { "x-api-key": PLACEHOLDER, "anthropic-version": "2023-06-01" }
      : { authorization: `Bearer ${PLACEHOLDER}`, "api-key": PLACEHOLDER };
    const response = await fetch(`http://127.0.0.1${request.path}`, {
      method: "POST",
      client,
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(request.body),
    });
    return { status: response.status, text: await response.text() };
  } finally {
    client.close();
  }
}

const CHAT = (model: string, stream = false) => ({
  model,
  stream,
  messages: [{ role: "user", content: "hello" }],
});

/** No header the fake received holds the task's placeholder. */
function noPlaceholder(request: FakeRequest): void {
  for (const [name, value] of Object.entries(request.headers)) {
    assert(!value.includes(PLACEHOLDER), `${name} carried the placeholder`);
  }
}

Deno.test("a model named <provider>/<model> goes to that provider's base URL under its path, with its key as a Bearer token and the rest as the model", async () => {
  await withProviders(async ({ fake, socket }) => {
    const answer = await send(socket, {
      path: "/v1/chat/completions",
      body: CHAT("openrouter/anthropic/claude-sonnet-4.5", true),
    });
    assertEquals(answer.status, 200, answer.text);
    assertStringIncludes(answer.text, "data: ");
    assertEquals(fake.requests.length, 1);
    const [got] = fake.requests;
    assertEquals([got.method, got.path], ["POST", "/api/v1/chat/completions"]);
    assertEquals(got.headers.authorization, `Bearer ${KEYS.OPENROUTER_API_KEY}`);
    assertEquals(got.headers["x-title"], "gurt");
    assertEquals(got.headers["api-key"], undefined);
    noPlaceholder(got);
    const body = JSON.parse(got.body);
    assertEquals(body.model, "anthropic/claude-sonnet-4.5");
    // The body check still applies: a stream is asked for its usage, so it is metered.
    assertEquals(body.stream_options, { include_usage: true });
  });
});

Deno.test("a model a provider lists goes there as it is: Responses under /openai/v1, Chat under /v1beta/openai/", async () => {
  await withProviders(async ({ fake, socket }) => {
    const groq = await send(socket, {
      path: "/v1/responses",
      body: { model: "llama-3.3-70b", input: "hello" },
    });
    assertEquals(groq.status, 200, groq.text);
    const gemini = await send(socket, {
      path: "/v1/chat/completions",
      body: CHAT("gemini/gemini-2.5-flash"),
    });
    assertEquals(gemini.status, 200, gemini.text);
    assertEquals(fake.requests.map((r) => r.path), [
      "/openai/v1/responses",
      "/v1beta/openai/chat/completions",
    ]);
    assertEquals(fake.requests[0].headers.authorization, `Bearer ${KEYS.GROQ_API_KEY}`);
    assertEquals(JSON.parse(fake.requests[0].body).model, "llama-3.3-70b");
    assertEquals(fake.requests[1].headers.authorization, `Bearer ${KEYS.GEMINI_API_KEY}`);
    assertEquals(JSON.parse(fake.requests[1].body).model, "gemini-2.5-flash");
    fake.requests.forEach(noPlaceholder);
  });
});

Deno.test("an Azure deployment keeps its api-version on the request and gets the key in api-key, not Authorization", async () => {
  await withProviders(async ({ fake, socket }) => {
    const answer = await send(socket, {
      path: "/v1/chat/completions?api-version=1999-01-01&trace=1",
      body: CHAT("azure/gpt-4o"),
    });
    assertEquals(answer.status, 200, answer.text);
    const [got] = fake.requests;
    assertEquals(
      got.path,
      "/openai/deployments/gpt-4o-dep/chat/completions?api-version=2024-10-21&trace=1",
    );
    assertEquals(got.headers["api-key"], KEYS.AZURE_OPENAI_KEY);
    assertEquals(got.headers.authorization, undefined);
    noPlaceholder(got);
  });
});

Deno.test("an Anthropic-shaped gateway under a path gets /v1/messages, its key in x-api-key and a header from the vault", async () => {
  await withProviders(async ({ fake, socket, box }) => {
    const answer = await send(socket, {
      path: "/v1/messages",
      anthropic: true,
      body: { model: "gateway/claude-sonnet-4-5", max_tokens: 64, messages: [] },
    });
    assertEquals(answer.status, 200, answer.text);
    const builtIn = await send(socket, {
      path: "/v1/messages",
      anthropic: true,
      body: { model: "claude-sonnet-4-5", max_tokens: 64, messages: [] },
    });
    assertEquals(builtIn.status, 200, builtIn.text);
    assertEquals(fake.requests.map((r) => r.path), ["/gateway/v1/messages", "/v1/messages"]);
    const [gateway, anthropic] = fake.requests;
    assertEquals(gateway.headers["x-api-key"], KEYS.GATEWAY_KEY);
    assertEquals(gateway.headers["x-team"], `Team ${KEYS.GATEWAY_TEAM_TOKEN}`);
    assertEquals(JSON.parse(gateway.body).model, "claude-sonnet-4-5");
    // The built-in service keeps its own key and origin.
    assertEquals(anthropic.headers["x-api-key"], KEYS.ANTHROPIC_API_KEY);
    assertEquals(anthropic.headers["x-team"], undefined);
    fake.requests.forEach(noPlaceholder);
    // Each answer's usage is charged to the task, as a built-in service's is.
    const journal = await Deno.readTextFile(
      `${socket.replace(/model\.sock$/, "")}journal.jsonl`,
    );
    const holds = journal.split("\n").filter((line) => line.includes('"model.hold"'));
    assertEquals(holds.length, 2, journal);
    assert(!JSON.stringify(box.logs).includes(KEYS.GATEWAY_KEY));
  });
});

Deno.test("a request in another API than its provider's, one whose key the vault lacks, and one asking the service to fetch are refused unsent", async () => {
  await withProviders(async ({ fake, socket, box }) => {
    const wrongApi = await send(socket, {
      path: "/v1/responses",
      body: { model: "openrouter/openai/gpt-5", input: "hello" },
    });
    assertEquals(wrongApi.status, 400, wrongApi.text);
    assertStringIncludes(wrongApi.text, "provider openrouter, which speaks openai-chat");
    assertStringIncludes(wrongApi.text, "runbook.md#provider-refused");
    const unkeyed = await send(socket, {
      path: "/v1/chat/completions",
      body: CHAT("unkeyed/some-model"),
    });
    assertEquals(unkeyed.status, 401, unkeyed.text);
    assertStringIncludes(unkeyed.text, "provider unkeyed needs the vault key UNKEYED_API_KEY");
    const fetches = await send(socket, {
      path: "/v1/chat/completions",
      body: { ...CHAT("openrouter/openai/gpt-4o"), web_search_options: {} },
    });
    assertEquals(fetches.status, 403, fetches.text);
    assertEquals(fake.requests.length, 0);
    // The refused fetch is recorded as a request to the provider, not to a built-in service.
    const journal = await Deno.readTextFile(`${socket.replace(/model\.sock$/, "")}journal.jsonl`);
    const blocked = journal.split("\n").filter((line) => line.includes("net.blocked"));
    assertEquals(blocked.length, 1, journal);
    assertStringIncludes(blocked[0], `${fake.url}/api/v1`);
    // The core said at its start which vault key the provider lacks, with gurt.toml's line.
    const said = box.logs.find((line) => line.includes("UNKEYED_API_KEY"));
    assert(said !== undefined, JSON.stringify(box.logs));
    assertStringIncludes(said, "gurt.toml:36: models.providers.unkeyed.key");
  });
});

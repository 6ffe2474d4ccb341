/**
 * For the spend tests: a real core whose model services are one scripted fake (startFakeService)
 * at base URLs with paths, the owner's providers and prices in gurt.toml, requests sent as a client
 * inside the task sends them, and scripted Chat Completions answers with OpenRouter's `usage.cost`.
 */
import { type BoxOptions, startBox, type TestBox, type TestTask } from "../kit/mod.ts";
import {
  anthropicUsual,
  type FakeRequest,
  type FakeService,
  openaiUsual,
  sse,
  startFakeService,
} from "./fake_services.ts";

export const PLACEHOLDER = "gurt-placeholder-key";

const KEYS: Record<string, string> = {
  ANTHROPIC_API_KEY: "sk-ant-spend-key-11",
  OPENAI_API_KEY: "sk-openai-spend-key-12",
  OPENROUTER_API_KEY: "sk-or-v1-spend-key-13",
  LITELLM_API_KEY: "sk-litellm-spend-key-14",
  OLLAMA_KEY: "ollama-any-15",
};

/** gurt.toml's [models] and providers at the fake, then `extra` (prices, say). */
export function spendToml(fake: string, extra = ""): string {
  return `[models]
anthropic_base_url = "${fake}"
openai_base_url = "${fake}"

[models.providers.openrouter]
base_url = "${fake}/api/v1"
api = "openai-chat"
key = "OPENROUTER_API_KEY"
prices = "reported"

[models.providers.litellm]
base_url = "${fake}/litellm"
api = "openai-chat"
key = "LITELLM_API_KEY"
prices = "reported"

[models.providers.ollama]
base_url = "${fake}/ollama/v1"
api = "openai-chat"
key = "OLLAMA_KEY"
models = ["qwen3-coder", "mystery-*"]

${extra}`;
}

/** What a spend test gets: the fake, the core, and one task (with this budget) on it. */
export interface SpendRun {
  fake: FakeService;
  box: TestBox;
  task: TestTask;
  socket: string;
}

/** A fake answering each API by its path's last part, wherever its base puts it. */
export function pathFake(): FakeService {
  return startFakeService((request: FakeRequest) => {
    const path = request.path.replace(/\?.*$/, "");
    if (path.endsWith("/v1/messages")) return anthropicUsual({ ...request, path: "/v1/messages" });
    if (path.endsWith("/responses")) return openaiUsual({ ...request, path: "/v1/responses" });
    return openaiUsual({ ...request, path: "/v1/chat/completions" });
  });
}

/** A core's options for spendToml(fake, extra), with the providers' keys in its vault. */
export function spendBoxOptions(fake: string, extra?: string): BoxOptions {
  return {
    toml: spendToml(fake, extra),
    core: { vault: { value: (name) => KEYS[name], names: () => Object.keys(KEYS) } },
  };
}

/** Runs `work` on a core with spendToml(extra) and one task of `budgetCents`. */
export async function withSpend(
  options: { extra?: string; budgetCents?: number | null; tools?: string[] },
  work: (run: SpendRun) => Promise<void>,
): Promise<void> {
  const fake = pathFake();
  try {
    const box = await startBox(spendBoxOptions(fake.url, options.extra));
    try {
      const task = await box.startTask({
        budgetCents: options.budgetCents ?? null,
        tools: options.tools,
      });
      const socket = `${box.home}/tasks/${task.id}/model.sock`;
      await work({ fake, box, task, socket });
    } finally {
      await box.close();
    }
  } finally {
    await fake.close();
  }
}

/** One request as a client inside the task sends it, with the placeholder key. */
export async function send(
  socket: string,
  request: { path: string; body: unknown; anthropic?: boolean },
): Promise<{ status: number; text: string }> {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  try {
    const headers: Record<string, string> = request.anthropic === true
      ? { "x-api-key": PLACEHOLDER, "anthropic-version": "2023-06-01" }
      : { authorization: `Bearer ${PLACEHOLDER}` };
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

/** A Chat Completions request body. */
export function chat(model: string, stream = false): unknown {
  return {
    model,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    max_tokens: 1000,
    messages: [{ role: "user", content: "hello" }],
  };
}

/** Chat Completions usage of these tokens, with OpenRouter's `cost` (dollars) when given. */
export function chatUsage(tokens: { input: number; output: number }, cost?: number): unknown {
  return {
    prompt_tokens: tokens.input,
    completion_tokens: tokens.output,
    total_tokens: tokens.input + tokens.output,
    ...(cost === undefined ? {} : { cost }),
  };
}

/** A whole Chat Completions answer with this usage. */
export function chatWhole(model: string, usage: unknown): unknown {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1700000000,
    model,
    choices: [{ index: 0, message: { role: "assistant", content: "Hi" }, finish_reason: "stop" }],
    usage,
  };
}

/** A streamed Chat Completions answer's writes: text, the usage chunk (if any), [DONE]. */
export function chatStream(model: string, usage: unknown | null): string[] {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    sse(undefined, {
      id: "c1",
      object: "chat.completion.chunk",
      created: 1,
      model,
      choices,
      usage,
    });
  return [
    chunk([{ index: 0, delta: { role: "assistant", content: "Hi" }, finish_reason: null }]),
    chunk([{ index: 0, delta: {}, finish_reason: "stop" }]),
    ...(usage === null ? [] : [chunk([], usage)]),
    "data: [DONE]\n\n",
  ];
}

/** The task's journal lines of a type, read from the admin socket. */
export async function journalOf(
  box: TestBox,
  task: TestTask,
  type: string,
): Promise<Record<string, unknown>[]> {
  const shown = await box.admin("GET", `/tasks/${task.id}`);
  return shown.body.journal.filter((line: { type: string }) => line.type === type);
}

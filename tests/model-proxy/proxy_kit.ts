/**
 * A model endpoint between the fake services, reached as a task reaches it: over loopback TCP,
 * through a forwarder that copies each connection byte for byte to the endpoint's Unix socket (as
 * the task's relay on 127.0.0.1:4100 does). The vault's keys are REAL_KEYS; a client sends
 * PLACEHOLDER, as every SDK in a task does.
 */
import {
  type ModelBlockedEvent,
  type ModelEndpoint,
  type ModelEndpointOptions,
  serveModelEndpoint,
  type UsageEvent,
} from "../../mod/model-proxy/mod.ts";
import { startForwarder } from "../egress/egress_kit.ts";
import {
  anthropicUsual,
  type FakeService,
  openaiUsual,
  startFakeService,
} from "./fake_services.ts";

/** The vault's keys, which only the fake services may see. */
export const REAL_KEYS = {
  anthropic: "sk-ant-api03-REAL-vault-key-0f3c9a",
  openai: "sk-proj-REAL-vault-key-7b21d4",
};

/** What every SDK in a task holds instead of a key. */
export const PLACEHOLDER = "gurt-placeholder-key";

/** A running endpoint with its fakes and what it reported. */
export interface ProxyTest {
  anthropic: FakeService;
  openai: FakeService;
  proxy: ModelEndpoint;
  /** `http://127.0.0.1:<port>`, the forwarder in front of the endpoint's socket. */
  url: string;
  usage: UsageEvent[];
  /** Resolves once `count` usage reports have arrived (a stream's comes after its end). */
  usageReports(count: number): Promise<void>;
  blocked: ModelBlockedEvent[];
  /** A request to the endpoint as Anthropic's SDK sends it. */
  anthropicPost(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** A request to the endpoint as OpenAI's SDK sends it. */
  openaiPost(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

/** Headers as Anthropic's SDK sends them, with the placeholder key. */
export const ANTHROPIC_HEADERS: Record<string, string> = {
  "content-type": "application/json",
  "x-api-key": PLACEHOLDER,
  "anthropic-version": "2023-06-01",
  "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
  "user-agent": "claude-cli/2.0.0 (external, cli)",
  "x-stainless-lang": "js",
};

/** Headers as OpenAI's SDK sends them, with the placeholder key. */
export const OPENAI_HEADERS: Record<string, string> = {
  "content-type": "application/json",
  authorization: `Bearer ${PLACEHOLDER}`,
  "user-agent": "codex_cli_rs/0.50.0",
  "openai-beta": "responses=experimental",
};

/** Options for the endpoint under test; `keys` replaces a vault key (null: the vault lacks it). */
export type TestOptions =
  & Partial<
    Pick<
      ModelEndpointOptions,
      | "maxBodyBytes"
      | "maxConcurrent"
      | "redaction"
      | "clock"
      | "drawBytes"
      | "admit"
      | "factorySessions"
    >
  >
  & {
    keys?: { anthropic?: string | null; openai?: string | null };
    /** Factory's API for factoryRequest: where, and the vault's FACTORY_API_KEY. */
    factory?: { baseUrl: string; key: string | null };
  };

/** Runs `body` with an endpoint and its fakes, and stops every one of them after. */
export async function withProxy(
  body: (test: ProxyTest) => Promise<void>,
  options: TestOptions = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gurt-model-proxy-" });
  const anthropic = startFakeService(anthropicUsual);
  const openai = startFakeService(openaiUsual);
  const usage: UsageEvent[] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  const usageReports = (count: number) => {
    if (usage.length >= count) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    waiting.push({ count, resolve });
    return promise;
  };
  const blocked: ModelBlockedEvent[] = [];
  const keys = { ...REAL_KEYS, ...options.keys };
  const proxy = await serveModelEndpoint({
    socketPath: `${dir}/model.sock`,
    services: {
      anthropic: { baseUrl: anthropic.url, key: () => keys.anthropic },
      openai: { baseUrl: `${openai.url}/`, key: () => keys.openai },
    },
    onUsage: (event) => {
      usage.push(event);
      for (const waiter of waiting) if (usage.length >= waiter.count) waiter.resolve();
      return Promise.resolve();
    },
    onBlocked: (event) => {
      blocked.push(event);
      return Promise.resolve();
    },
    maxBodyBytes: options.maxBodyBytes,
    maxConcurrent: options.maxConcurrent,
    drawBytes: options.drawBytes,
    admit: options.admit,
    placeholder: PLACEHOLDER,
    factory: options.factory === undefined
      ? undefined
      : { baseUrl: options.factory.baseUrl, key: () => options.factory!.key },
    factorySessions: options.factorySessions,
    redaction: options.redaction,
    clock: options.clock,
  });
  const forwarder = startForwarder(proxy.socketPath);
  const url = `http://127.0.0.1:${forwarder.port}`;
  const post = (base: Record<string, string>) =>
  (
    path: string,
    json: unknown,
    headers: Record<string, string> = {},
  ) =>
    fetch(`${url}${path}`, {
      method: "POST",
      headers: { ...base, ...headers },
      body: typeof json === "string" ? json : JSON.stringify(json),
    });
  try {
    await body({
      anthropic,
      openai,
      proxy,
      url,
      usage,
      usageReports,
      blocked,
      anthropicPost: post(ANTHROPIC_HEADERS),
      openaiPost: post(OPENAI_HEADERS),
    });
  } finally {
    await proxy.close();
    await forwarder.close();
    await anthropic.close();
    await openai.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** A gate a test opens when it has seen what it waits for. */
export function gate(): { promise: Promise<void>; open: () => void } {
  const { promise, resolve } = Promise.withResolvers<void>();
  return { promise, open: resolve };
}

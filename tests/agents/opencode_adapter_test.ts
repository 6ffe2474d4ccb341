/**
 * OpenCode's adapter (issue 20): the settings it writes into the task's home, its command line, and
 * how it reads OpenCode's output, checked as data; then the real opencode 1.18.33 run with those
 * files in a temporary HOME against the scripted fake model services (Chat Completions, Responses,
 * Messages) and the stand-in MCP server, behind a proxy that records whatever tries to leave.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { agentBinary, type AgentContext } from "../../mod/agents/mod.ts";
import {
  OPENCODE_CONFIG_FILE,
  OPENCODE_DEFAULT_MODEL,
  OPENCODE_RESUME_PROMPT,
  opencodeAdapter,
  opencodeWire,
} from "../../mod/agents/opencode.ts";
import {
  contentText,
  isTitleRequest,
  PENDING_WORDS,
  startFakeChat,
} from "../../mod/stand-in/chat.ts";
import { startFakeResponses } from "../../mod/stand-in/responses.ts";
import { startFakeAnthropic } from "../../mod/stand-in/anthropic.ts";
import { readStandInLog, standInMcp } from "./stand_in_mcp.ts";

const CONTEXT: AgentContext = {
  prompt: "Say hi through the box.",
  model: null,
  home: "/home/task",
  mcp: {
    command: "/usr/local/bin/gurt",
    args: ["mcp", "--wait-ms", "50000"],
    env: { BOX_SOCKET: "/.gurt/doors/0.sock" },
  },
  endpoint: {
    anthropic: "http://127.0.0.1:4100",
    openai: "http://127.0.0.1:4100/v1",
    placeholder: "gurt-placeholder-key",
  },
  mcpWaitMs: 50_000,
};

// deno-lint-ignore no-explicit-any
type Json = any;

function configOf(context: AgentContext): Json {
  return JSON.parse(opencodeAdapter.files(context)[OPENCODE_CONFIG_FILE]);
}

Deno.test("opencode's settings name gurt's provider at the task's endpoint with the placeholder, the box's server, and permissions that never ask for it", () => {
  const files = opencodeAdapter.files(CONTEXT);
  assertEquals(Object.keys(files).sort(), [
    ".config/opencode/node_modules/.gurt",
    ".config/opencode/opencode.json",
    ".config/opencode/package-lock.json",
  ]);
  const config = configOf(CONTEXT);
  assertEquals(config.model, `gurt/${OPENCODE_DEFAULT_MODEL}`);
  assertEquals(config.small_model, `gurt/${OPENCODE_DEFAULT_MODEL}`);
  assertEquals(config.enabled_providers, ["gurt"]);
  assertEquals(config.provider, {
    gurt: {
      npm: "@ai-sdk/openai",
      name: "gurt",
      options: { baseURL: "http://127.0.0.1:4100/v1", apiKey: "gurt-placeholder-key" },
      models: { [OPENCODE_DEFAULT_MODEL]: { name: OPENCODE_DEFAULT_MODEL } },
    },
  });
  assertEquals(config.mcp, {
    box: {
      type: "local",
      command: ["/usr/local/bin/gurt", "mcp", "--wait-ms", "50000"],
      environment: { BOX_SOCKET: "/.gurt/doors/0.sock" },
      enabled: true,
      timeout: 80_000,
    },
  });
  assertEquals(config.permission, { "box_*": "allow" });
  assertEquals([config.share, config.autoupdate], ["disabled", false]);
  // The lock OpenCode checks before installing its plugin package lists it.
  const lock = JSON.parse(files[".config/opencode/package-lock.json"]);
  assertEquals(Object.keys(lock.packages[""].dependencies), ["@opencode-ai/plugin"]);
});

Deno.test("opencode speaks Messages to a claude-* model, Responses to OpenAI's, Chat Completions to any other", () => {
  assertEquals(
    ["claude-sonnet-4-5", "gpt-5", "gpt-5-mini", "o3", "o4-mini", "codex-mini-latest"].map(
      opencodeWire,
    ),
    ["anthropic", "openai", "openai", "openai", "openai", "openai"],
  );
  assertEquals(["qwen3-coder", "llama-3.3-70b", "openai/gpt-oss-120b", "o"].map(opencodeWire), [
    "openai-compatible",
    "openai-compatible",
    "openai-compatible",
    "openai-compatible",
  ]);
  const claude = configOf({ ...CONTEXT, model: "claude-sonnet-4-5" }).provider.gurt;
  assertEquals([claude.npm, claude.options], ["@ai-sdk/anthropic", {
    baseURL: "http://127.0.0.1:4100/v1",
    apiKey: "gurt-placeholder-key",
  }]);
  const other = configOf({ ...CONTEXT, model: "qwen3-coder" }).provider.gurt;
  assertEquals([other.npm, other.options.baseURL], [
    "@ai-sdk/openai-compatible",
    "http://127.0.0.1:4100/v1",
  ]);
});

const HOSTILE = 'm", "mcp": {"evil": {"type": "local"}}, "x": "{env:HOME}{file:/etc/shadow}\n\\';

Deno.test("a hostile model or MCP value is carried as data: it adds no key, and leaves OpenCode no {env:} or {file:} to fill in", () => {
  const context: AgentContext = {
    ...CONTEXT,
    model: HOSTILE,
    mcp: {
      command: "/opt/{env:HOME}/gurt",
      args: ["mcp", "{file:/etc/shadow}"],
      env: { BOX_SOCKET: "{env:OPENAI_API_KEY}" },
    },
  };
  const text = opencodeAdapter.files(context)[OPENCODE_CONFIG_FILE];
  assert(!/\{(env|file):/.test(text), text);
  const config = JSON.parse(text);
  assertEquals(Object.keys(config).sort(), [
    "$schema",
    "autoupdate",
    "enabled_providers",
    "mcp",
    "model",
    "permission",
    "provider",
    "share",
    "small_model",
  ]);
  assertEquals(config.model, `gurt/${HOSTILE}`);
  assertEquals(Object.keys(config.provider.gurt.models), [HOSTILE]);
  assertEquals(Object.keys(config.mcp), ["box"]);
  assertEquals(config.mcp.box.command, ["/opt/{env:HOME}/gurt", "mcp", "{file:/etc/shadow}"]);
  assertEquals(config.mcp.box.environment, { BOX_SOCKET: "{env:OPENAI_API_KEY}" });
});

Deno.test("opencode's command line: run with JSON events, gurt's model, -s to resume, the prompt as words it joins back", () => {
  const prompt = '-m other  "two  spaces"\nand a "quote" -- --help';
  const fresh = opencodeAdapter.command({ ...CONTEXT, prompt }, null);
  const words = prompt.split(" ");
  assertEquals(fresh.args, ["run", "--format", "json", "-m", "gurt/gpt-5", "--", ...words]);
  // OpenCode quotes a word that holds a space and joins them with one: none holds one, so the
  // prompt it sends is the task's prompt exactly.
  assertEquals(words.join(" "), prompt);
  assertEquals(fresh.env, {
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  });
  const resumed = opencodeAdapter.command(
    { ...CONTEXT, model: "claude-sonnet-4-5" },
    { id: "ses_abc", resume: true },
  );
  assertEquals(resumed.args, [
    "run",
    "--format",
    "json",
    "-m",
    "gurt/claude-sonnet-4-5",
    "-s",
    "ses_abc",
    "--",
    ...OPENCODE_RESUME_PROMPT.split(" "),
  ]);
  assertEquals(opencodeAdapter.choosesSession, false);
});

const SESSION = "ses_dcaddfd63ffeyi7yHfCS99gXon";
const line = (event: Record<string, unknown>) => JSON.stringify({ sessionID: SESSION, ...event });
const TOOL = line({
  type: "tool_use",
  part: { type: "tool", tool: "box_example__echo", state: { status: "completed" } },
});
const text = (words: string) => line({ type: "text", part: { type: "text", text: words } });

Deno.test("opencode's output: the session from any event, the last text part as the answer, an error event or exit code as a failure", () => {
  assertEquals(opencodeAdapter.sessionIn(line({ type: "step_start" })), SESSION);
  assertEquals(opencodeAdapter.sessionIn("not json"), null);
  assertEquals(opencodeAdapter.sessionIn('{"type":"text"}'), null);
  const done = [line({ type: "step_start" }), TOOL, text("first"), text("FINAL: it")].join("\n");
  assertEquals(opencodeAdapter.outcome(done + "\n", 0), {
    session: SESSION,
    answer: "FINAL: it",
    ok: true,
  });
  assertEquals(opencodeAdapter.outcome(done, 1).ok, false);
  const error = line({ type: "error", error: { name: "APIError", data: { statusCode: 400 } } });
  assertEquals(opencodeAdapter.outcome([TOOL, error].join("\n"), 0), {
    session: SESSION,
    answer: null,
    ok: false,
  });
  assertEquals(opencodeAdapter.outcome("", 1), { session: null, answer: null, ok: false });
  assertEquals(opencodeAdapter.outcome("", 0), { session: null, answer: null, ok: false });
  // Work that ends in tools alone, with no text, still ended well.
  assertEquals(opencodeAdapter.outcome(TOOL, 0), { session: SESSION, answer: null, ok: true });
});

// The real opencode, run as `gurt agent-run` would run it, with a temporary HOME.

const BINARY = agentBinary(opencodeAdapter);
const installed = await Deno.stat(BINARY).then((info) => info.isFile, () => false);
if (!installed) {
  console.log(`skipping the runs of opencode: ${BINARY} is missing (install.sh installs it)`);
}
const STRACE = await new Deno.Command("strace", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((out) => out.success, () => false);
if (installed && !STRACE) console.log("strace is missing: connects are seen by the proxy alone");

/** A proxy that records the first line of each request (a CONNECT names its host) and refuses. */
function startRecordingProxy(): { url: string; seen: string[]; close(): void } {
  const seen: string[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of listener) {
      (async () => {
        const buffer = new Uint8Array(4096);
        const read = await conn.read(buffer).catch(() => null);
        seen.push(new TextDecoder().decode(buffer.subarray(0, read ?? 0)).split("\r\n")[0]);
        await conn.write(new TextEncoder().encode(
          "HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        )).catch(() => 0);
        conn.close();
      })();
    }
  })().catch(() => {});
  const port = (listener.addr as Deno.NetAddr).port;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => listener.close() };
}

/** The IP addresses `strace -e trace=connect` saw connected to. */
function connectedTo(trace: string): string[] {
  return [...trace.matchAll(/inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"/g)]
    .map((found) => found[1] ?? found[2]);
}

function loopback(address: string): boolean {
  return address.startsWith("127.") || address === "::1" || address === "::ffff:127.0.0.1";
}

interface OpencodeRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The addresses it connected to (seen by strace; none without it). */
  connects: string[];
}

/** Writes the adapter's files into the context's home and runs opencode there as agent-run would. */
async function runOpencode(
  context: AgentContext,
  session: { id: string; resume: boolean } | null,
  proxy: string,
  extra: string[] | null = null,
): Promise<OpencodeRun> {
  const home = context.home;
  for (const [relative, text] of Object.entries(opencodeAdapter.files(context))) {
    const path = `${home}/${relative}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, text);
  }
  const { args, env } = opencodeAdapter.command(context, session);
  const environment: Record<string, string> = {
    PATH: "/usr/bin:/bin",
    HOME: home,
    // What a task's environment holds besides (the endpoint's placeholders).
    OPENAI_API_KEY: context.endpoint.placeholder,
    ANTHROPIC_API_KEY: context.endpoint.placeholder,
    ...env,
    HTTPS_PROXY: proxy,
    HTTP_PROXY: proxy,
    ALL_PROXY: proxy,
    https_proxy: proxy,
    http_proxy: proxy,
    all_proxy: proxy,
    NO_PROXY: "localhost,127.0.0.1,::1",
    no_proxy: "localhost,127.0.0.1,::1",
  };
  await Deno.mkdir(`${home}/work`, { recursive: true });
  const trace = `${home}/strace.txt`;
  const command = [BINARY, ...(extra ?? args)];
  const argv = STRACE
    ? ["strace", "-f", "-qq", "-e", "trace=connect", "-o", trace, ...command]
    : command;
  const out = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    env: environment,
    clearEnv: true,
    cwd: `${home}/work`,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(180_000),
  }).output();
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
    connects: STRACE ? connectedTo(await Deno.readTextFile(trace)) : [],
  };
}

/** Asserts nothing was reached but loopback: no request through the proxy, no connect off it. */
function assertStayedHome(runs: OpencodeRun[], proxy: { seen: string[] }): void {
  assertEquals(proxy.seen, []);
  const connects = runs.flatMap((run) => run.connects);
  // strace saw the fake's own connects, so it was looking.
  if (STRACE) assert(connects.includes("127.0.0.1"), connects.join(", "));
  assertEquals(connects.filter((address) => !loopback(address)), []);
}

/** Runs `work` with a fresh home, the stand-in's log, and a recording proxy; removes them after. */
async function withRun(
  work: (home: string, log: string, proxy: ReturnType<typeof startRecordingProxy>) => Promise<void>,
): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "gurt-opencode-" });
  const proxy = startRecordingProxy();
  try {
    await work(home, `${home}/stand-in.jsonl`, proxy);
  } finally {
    proxy.close();
    await Deno.remove(home, { recursive: true });
  }
}

const PROMPT = '-m other  "Say hi"\nthrough the box -- --help';

Deno.test({
  name:
    "opencode 1.18.33 on Chat Completions answers its title request, lists and calls box_example__echo, answers, and resumes with -s, with the prompt as given and no host but the fake",
  ignore: !installed,
  fn: () =>
    withRun(async (home, log, proxy) => {
      const fake = startFakeChat({ agent: "opencode" });
      try {
        const context: AgentContext = {
          ...CONTEXT,
          prompt: PROMPT,
          model: "qwen3-coder",
          home,
          mcp: standInMcp(log),
          endpoint: { ...CONTEXT.endpoint, anthropic: fake.url, openai: `${fake.url}/v1` },
        };
        const first = await runOpencode(context, null, proxy.url);
        const lines = first.stdout.split("\n").filter((line) => line !== "");
        const session = opencodeAdapter.sessionIn(lines[0] ?? "");
        assert(session?.startsWith("ses_"), `no session:\n${first.stdout}\n${first.stderr}`);
        assertEquals(opencodeAdapter.outcome(first.stdout, first.code), {
          session,
          answer: "FINAL: echo: hi from opencode",
          ok: true,
        }, first.stdout + first.stderr);

        const calls = (await readStandInLog(log)).filter((event) => event.event === "call");
        assertEquals(calls, [
          { event: "call", name: "example__echo", arguments: { text: "hi from opencode" } },
        ]);
        // The title request comes first, with no tools; then the turn, offering the box's tool.
        const [title, turn, after]: Json[] = fake.turns();
        assertEquals([title.model, title.tools, isTitleRequest(title)], [
          "qwen3-coder",
          undefined,
          true,
        ]);
        const offered = turn.tools.map((tool: Json) => tool.function.name);
        assert(offered.includes("box_example__echo"), offered.join(", "));
        assert(offered.includes("bash"), offered.join(", "));
        // The task's prompt reached the model as it was given.
        assertEquals(contentText(turn.messages.at(-1).content), PROMPT);
        assertEquals(after.messages.at(-1).role, "tool");
        for (const request of fake.requests) {
          assertEquals(request.headers.authorization, "Bearer gurt-placeholder-key");
          assertEquals(request.path, "/v1/chat/completions");
        }

        // Resumed: the same session, its history sent again, the resume prompt after it.
        const before = fake.turns().length;
        const second = await runOpencode(context, { id: session!, resume: true }, proxy.url);
        assertEquals(opencodeAdapter.outcome(second.stdout, second.code), {
          session,
          answer: "FINAL: echo: hi from opencode",
          ok: true,
        }, second.stdout + second.stderr);
        const again = fake.turns().slice(before).find((body) => Array.isArray(body.tools));
        const history = JSON.stringify(again?.messages);
        assertStringIncludes(history, "FINAL: echo: hi from opencode");
        assertStringIncludes(history, JSON.stringify(OPENCODE_RESUME_PROMPT));

        assertStayedHome([first, second], proxy);
      } finally {
        await fake.close();
      }
    }),
});

Deno.test({
  name:
    "opencode 1.18.33 on its default model gpt-5 speaks Responses with max_output_tokens, calls box_example__echo and answers",
  ignore: !installed,
  fn: () =>
    withRun(async (home, log, proxy) => {
      const fake = startFakeResponses({ agent: "opencode" });
      try {
        const context: AgentContext = {
          ...CONTEXT,
          home,
          mcp: standInMcp(log),
          endpoint: { ...CONTEXT.endpoint, anthropic: fake.url, openai: `${fake.url}/v1` },
        };
        const run = await runOpencode(context, null, proxy.url);
        assertEquals(
          opencodeAdapter.outcome(run.stdout, run.code).answer,
          "FINAL: echo: hi from opencode",
          run.stdout + run.stderr,
        );
        const turns = fake.turns();
        assert(turns.length >= 2, JSON.stringify(fake.requests.map((request) => request.path)));
        for (const body of turns) {
          assertEquals(body.model, "gpt-5");
          // gpt-5 refuses Chat Completions' max_tokens; Responses' own field is what goes.
          assertEquals([typeof body.max_output_tokens, body.max_tokens], ["number", undefined]);
        }
        for (const request of fake.requests) {
          assertEquals(request.headers.authorization, "Bearer gurt-placeholder-key");
        }
        const calls = (await readStandInLog(log)).filter((event) => event.event === "call");
        assertEquals(calls.length, 1);
        assertStayedHome([run], proxy);
      } finally {
        await fake.close();
      }
    }),
});

Deno.test({
  name:
    "opencode 1.18.33 on a claude-* model speaks Messages at ANTHROPIC_BASE_URL with the placeholder as x-api-key, calls box_example__echo and answers",
  ignore: !installed,
  fn: () =>
    withRun(async (home, log, proxy) => {
      const fake = startFakeAnthropic({ agent: "opencode" });
      try {
        const context: AgentContext = {
          ...CONTEXT,
          model: "claude-sonnet-4-5",
          home,
          mcp: standInMcp(log),
          endpoint: { ...CONTEXT.endpoint, anthropic: fake.url, openai: `${fake.url}/v1` },
        };
        const run = await runOpencode(context, null, proxy.url);
        assertEquals(
          opencodeAdapter.outcome(run.stdout, run.code).answer,
          "FINAL: echo: hi from opencode",
          run.stdout + run.stderr,
        );
        const requests = fake.messages();
        assert(requests.length >= 2, JSON.stringify(fake.requests.map((request) => request.path)));
        for (const request of requests) {
          assertEquals(request.path.replace(/\?.*$/, ""), "/v1/messages");
          assertEquals(request.headers["x-api-key"], "gurt-placeholder-key");
          assertEquals(request.body.model, "claude-sonnet-4-5");
        }
        const offered = requests.at(-1)!.body.tools.map((tool: Json) => tool.name);
        assert(offered.includes("box_example__echo"), offered.join(", "));
        assertStayedHome([run], proxy);
      } finally {
        await fake.close();
      }
    }),
});

Deno.test({
  name:
    "opencode 1.18.33 makes a call that waits for the owner again and again with the same input without taking it for a loop",
  ignore: !installed,
  fn: () =>
    withRun(async (home, log, proxy) => {
      // The stand-in echoes the text, so every result asks to call again: the fake does, 3 times,
      // one call an answer, as a model told a call waits for the owner does.
      const text = `pending. ${PENDING_WORDS} later.`;
      const fake = startFakeChat({ agent: "opencode", text, retries: 3 });
      try {
        const context: AgentContext = {
          ...CONTEXT,
          model: "qwen3-coder",
          home,
          mcp: standInMcp(log),
          endpoint: { ...CONTEXT.endpoint, anthropic: fake.url, openai: `${fake.url}/v1` },
        };
        const run = await runOpencode(context, null, proxy.url);
        assertEquals(opencodeAdapter.outcome(run.stdout, run.code), {
          session: opencodeAdapter.sessionIn(run.stdout.split("\n")[0]),
          answer: `FINAL: echo: ${text}`,
          ok: true,
        }, run.stdout + run.stderr);
        const calls = (await readStandInLog(log)).filter((event) => event.event === "call");
        assertEquals(calls.length, 4);
      } finally {
        await fake.close();
      }
    }),
});

Deno.test({
  name:
    "opencode 1.18.33 reads a hostile model from these settings as it is, with nothing filled in",
  ignore: !installed,
  fn: () =>
    withRun(async (home, _log, proxy) => {
      const context: AgentContext = { ...CONTEXT, model: HOSTILE, home };
      const run = await runOpencode(context, null, proxy.url, ["debug", "config"]);
      assertEquals(run.code, 0, run.stderr);
      const config = JSON.parse(run.stdout);
      assertEquals(config.model, `gurt/${HOSTILE}`);
      assertEquals(Object.keys(config.mcp), ["box"]);
      assertEquals(Object.keys(config.provider.gurt.models), [HOSTILE]);
    }),
});

Deno.test("opencode speaks a provider's model in that provider's API, whatever the model's name says", () => {
  const cases = [
    ["gateway/claude-sonnet-4-5", "openai-chat", "@ai-sdk/openai-compatible"],
    ["gateway/sonnet", "anthropic", "@ai-sdk/anthropic"],
    ["groq/llama-3.3-70b", "openai-responses", "@ai-sdk/openai"],
  ] as const;
  for (const [model, api, npm] of cases) {
    const gurt = configOf({ ...CONTEXT, model, modelApi: { model, api } }).provider.gurt;
    assertEquals(gurt.npm, npm, model);
  }
  // Without it, the name decides as before.
  const plain = configOf({ ...CONTEXT, model: "gateway/claude-sonnet-4-5" }).provider.gurt;
  assertEquals(plain.npm, "@ai-sdk/openai-compatible");
  const named = configOf({ ...CONTEXT, model: "claude-haiku-4-5", modelApi: null }).provider.gurt;
  assertEquals(named.npm, "@ai-sdk/anthropic");
});

/**
 * Droid's adapter (issue 20): the settings it writes into the task's home, its command line, and how
 * it reads Droid's output, checked as data; then the real droid 0.215.0 run with those files in a
 * temporary HOME against the scripted fake Anthropic service and the stand-in MCP server, with
 * Factory's hosts answered by a local 404 stub (as the box answers them with no FACTORY_API_KEY).
 */
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { agentBinary, type AgentContext } from "../../mod/agents/mod.ts";
import {
  DROID_CHECK_MODEL,
  DROID_DEFAULT_MODEL,
  DROID_FACTORY_ORIGIN,
  DROID_RESUME_PROMPT,
  DROID_TOOLS_PROMPT,
  droidAdapter,
} from "../../mod/agents/droid.ts";
import { startFakeAnthropicDroid } from "./fake_anthropic_droid.ts";
import { readStandInLog, standInMcp } from "./stand_in_mcp.ts";

const CONTEXT: AgentContext = {
  prompt: "Say hi through the box.",
  model: "claude-sonnet-4-5",
  home: "/home/task",
  mcp: {
    command: "/usr/local/bin/gurt",
    args: ["mcp"],
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

function settingsOf(context: AgentContext): { settings: Json; mcp: Json } {
  const files = droidAdapter.files(context);
  assertEquals(Object.keys(files).sort(), [".factory/mcp.json", ".factory/settings.json"]);
  return {
    settings: JSON.parse(files[".factory/settings.json"]),
    mcp: JSON.parse(files[".factory/mcp.json"]),
  };
}

/** The value after `flag` in `args`, else undefined. */
function after(args: string[], flag: string): string | undefined {
  const i = args.indexOf(flag);
  return i === -1 ? undefined : args[i + 1];
}

Deno.test("droid's package is droid 0.215.0 and its binary the native one npm's postinstall links", () => {
  assertEquals(droidAdapter.name, "droid");
  assertEquals(droidAdapter.package, {
    name: "droid",
    version: "0.215.0",
    bin: "node_modules/droid/bin/droid",
  });
  assertEquals(droidAdapter.choosesSession, false);
});

Deno.test("droid without Factory: a bring-your-own-key model at the task's Anthropic endpoint with the placeholder key, Haiku beside it", () => {
  const { settings } = settingsOf(CONTEXT);
  assertEquals(settings.customModels, [
    {
      model: "claude-sonnet-4-5",
      displayName: "Box Model",
      provider: "anthropic",
      baseUrl: "http://127.0.0.1:4100",
      apiKey: "gurt-placeholder-key",
      maxOutputTokens: 32_000,
    },
    {
      model: DROID_CHECK_MODEL,
      displayName: "Box Haiku",
      provider: "anthropic",
      baseUrl: "http://127.0.0.1:4100",
      apiKey: "gurt-placeholder-key",
      maxOutputTokens: 32_000,
    },
  ]);
  assertEquals(DROID_CHECK_MODEL, "claude-haiku-4-5");
  // Droid waits for the box's tools before its first model request.
  assertEquals(settings.blockOnMcpLoad, true);
  // The same with services saying so.
  assertEquals(settingsOf({ ...CONTEXT, services: { factory: false } }).settings, settings);

  const args = droidAdapter.command(CONTEXT, null).args;
  assertEquals(after(args, "-m"), "custom:Box-Model-0");
});

Deno.test("droid without Factory: a task naming no model gets claude-sonnet-5-5, and a model not Claude's goes to the OpenAI endpoint", () => {
  assertEquals(DROID_DEFAULT_MODEL, "claude-sonnet-5-5");
  const plain = settingsOf({ ...CONTEXT, model: null }).settings.customModels[0];
  assertEquals([plain.model, plain.provider], ["claude-sonnet-5-5", "anthropic"]);

  const openai = settingsOf({ ...CONTEXT, model: "gpt-5" }).settings.customModels;
  assertEquals(openai[0], {
    model: "gpt-5",
    displayName: "Box Model",
    provider: "openai",
    baseUrl: "http://127.0.0.1:4100/v1",
    apiKey: "gurt-placeholder-key",
    maxOutputTokens: 32_000,
  });
  assertEquals(openai[1].model, DROID_CHECK_MODEL);
});

Deno.test("droid without Factory: the task's model, else the box's (BOX_MODEL, else [models] model, as GET /model says), else claude-sonnet-5-5", () => {
  const model = (context: AgentContext) => settingsOf(context).settings.customModels[0].model;
  assertEquals(model({ ...CONTEXT, model: null, boxModel: "claude-opus-4-5" }), "claude-opus-4-5");
  assertEquals(
    model({ ...CONTEXT, model: "claude-sonnet-4-6", boxModel: "claude-opus-4-5" }),
    "claude-sonnet-4-6",
  );
  assertEquals(model({ ...CONTEXT, model: null, boxModel: null }), DROID_DEFAULT_MODEL);
});

Deno.test("droid with Factory in the vault: no model of its own in the settings, and -m names the task's model or none", () => {
  const factory = { ...CONTEXT, services: { factory: true } };
  const { settings } = settingsOf(factory);
  assertEquals(settings.customModels, []);
  assertEquals(settings.blockOnMcpLoad, true);
  assertEquals(after(droidAdapter.command(factory, null).args, "-m"), "claude-sonnet-4-5");
  const none = droidAdapter.command({ ...factory, model: null }, null).args;
  assertEquals(none.includes("-m"), false, none.join(" "));
});

Deno.test("droid's mcp.json holds the box's server alone, stdio, with gurt mcp's environment, box_ask_user for Droid's questions (--ask-user-tool) and a call timeout past its wait", () => {
  const { mcp } = settingsOf(CONTEXT);
  assertEquals(mcp, {
    mcpServers: {
      box: {
        type: "stdio",
        command: "/usr/local/bin/gurt",
        args: ["mcp", "--ask-user-tool"],
        env: { BOX_SOCKET: "/.gurt/doors/0.sock" },
        timeout: 110_000,
      },
    },
  });
});

Deno.test("droid's command: exec with streamed JSON, --auto high, the box-tools prompt, and the prompt after --", () => {
  const { args, env } = droidAdapter.command({ ...CONTEXT, prompt: "--help me" }, null);
  assertEquals(args, [
    "exec",
    "--output-format",
    "stream-json",
    "--auto",
    "high",
    "--append-system-prompt",
    DROID_TOOLS_PROMPT,
    "-m",
    "custom:Box-Model-0",
    "--",
    "--help me",
  ]);
  assertStringIncludes(DROID_TOOLS_PROMPT, "box___");
  assertStringIncludes(DROID_TOOLS_PROMPT, 'ToolSearch with {"query":"+box___"');
  assertStringIncludes(DROID_TOOLS_PROMPT, "no AskUser");
  assertStringIncludes(DROID_TOOLS_PROMPT, "box___box_ask_user");
  // No update, and Factory's telemetry goes to the one Factory host the box answers.
  assertEquals(env, {
    FACTORY_DROID_AUTO_UPDATE_ENABLED: "false",
    FACTORY_TELEMETRY_INGEST_BASE_URL: DROID_FACTORY_ORIGIN,
    OTEL_PRODUCT_ENDPOINT: DROID_FACTORY_ORIGIN,
    OTEL_CUSTOMER_ENDPOINT: DROID_FACTORY_ORIGIN,
  });
  assertEquals(DROID_FACTORY_ORIGIN, "https://api.factory.ai");
});

Deno.test("droid resumes a kept session with -s and the resume prompt; an id Droid would not name is refused", () => {
  const id = "51faf08f-ce8b-4283-a239-261cf241fb37";
  const { args } = droidAdapter.command(CONTEXT, { id, resume: true });
  assertEquals(after(args, "-s"), id);
  assertEquals(args.slice(-2), ["--", DROID_RESUME_PROMPT]);
  for (const bad of ["--help", "", "a b", "x".repeat(200), "../../etc"]) {
    assertThrows(
      () => droidAdapter.command(CONTEXT, { id: bad, resume: true }),
      Error,
      "not a Droid session id",
    );
  }
});

// Lines of droid 0.215.0's `exec -o stream-json`, as it printed them here (tools list shortened).
const SESSION = "51faf08f-ce8b-4283-a239-261cf241fb37";
const INIT =
  `{"type":"system","subtype":"init","cwd":"/home/task","session_id":"${SESSION}","tools":["Read","ToolSearch"],"model":"custom:Box-Model-0","reasoning_effort":"off"}`;
const SUCCESS = [
  INIT,
  `{"type":"message","role":"user","id":"330ac9c6","text":"do it","timestamp":1796187532155,"session_id":"${SESSION}"}`,
  `{"type":"tool_call","id":"toolu_fake_5","messageId":"7cd65aef","toolId":"box___echo","toolName":"box___echo","parameters":{"text":"hi"},"timestamp":1796187532410,"session_id":"${SESSION}"}`,
  `{"type":"tool_result","id":"toolu_fake_5","messageId":"9de38c46","toolId":"box___echo","isError":false,"value":"box echo says: hi","timestamp":1796187532432,"session_id":"${SESSION}"}`,
  `{"type":"message","role":"assistant","id":"2fce1852","text":"FINAL: box echo says: hi","timestamp":1796187532505,"session_id":"${SESSION}"}`,
  `{"type":"completion","finalText":"FINAL: box echo says: hi","numTurns":3,"durationMs":488,"session_id":"${SESSION}","timestamp":1796187532522,"usage":{"input_tokens":300,"output_tokens":60}}`,
].join("\n") + "\n";
const MODEL_FAILED = [
  INIT,
  `{"type":"error","source":"agent_loop","message":"400 {\\"type\\":\\"error\\"}","timestamp":1796187543593,"session_id":"${SESSION}"}`,
  `{"type":"error","source":"cli","message":"Exec failed","timestamp":1796187543616,"session_id":"${SESSION}"}`,
].join("\n") + "\n";
const STOPPED = [
  INIT,
  `{"type":"message","role":"assistant","id":"da6fef7c","text":"Exec ended early: insufficient permission to proceed.","timestamp":1796187563262,"session_id":"${SESSION}"}`,
  `{"type":"error","source":"cli","message":"Exec ended early: insufficient permission to proceed.","timestamp":1796187563281,"session_id":"${SESSION}"}`,
].join("\n") + "\n";

Deno.test("droid's session is read from the first line of its output, and from no line that is not Droid's", () => {
  assertEquals(droidAdapter.sessionIn(INIT), SESSION);
  assertEquals(droidAdapter.sessionIn("Error during droid execution: x"), null);
  assertEquals(droidAdapter.sessionIn("{}"), null);
  assertEquals(droidAdapter.sessionIn('{"session_id":"--resume"}'), null);
  assertEquals(droidAdapter.sessionIn('{"session_id":42}'), null);
  assertEquals(droidAdapter.sessionIn("[1]"), null);
});

Deno.test("droid's outcome: the completion's text is the answer; an error event or a failed exit is not finished", () => {
  assertEquals(droidAdapter.outcome(SUCCESS, 0), {
    session: SESSION,
    answer: "FINAL: box echo says: hi",
    ok: true,
  });
  assertEquals(droidAdapter.outcome(SUCCESS, 1).ok, false);
  // With no text of the model's, the errors, the last first, say why.
  assertEquals(droidAdapter.outcome(MODEL_FAILED, 1), {
    session: SESSION,
    answer: 'Exec failed: 400 {"type":"error"}',
    ok: false,
  });
  assertEquals(droidAdapter.outcome(STOPPED, 1), {
    session: SESSION,
    answer: "Exec ended early: insufficient permission to proceed.",
    ok: false,
  });
  // Nothing at all: a crash before its first line.
  assertEquals(droidAdapter.outcome("", 134), { session: null, answer: null, ok: false });
  // `-o json`'s one result object reads the same.
  const whole =
    `{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":"FINAL: hi","session_id":"${SESSION}"}\n`;
  assertEquals(droidAdapter.outcome(whole, 0), { session: SESSION, answer: "FINAL: hi", ok: true });
  const failed =
    `{"type":"result","subtype":"failure","is_error":true,"result":"Exec failed","session_id":"${SESSION}"}\n`;
  assertEquals(droidAdapter.outcome(failed, 1), {
    session: SESSION,
    answer: "Exec failed",
    ok: false,
  });
});

// The real droid, run as `gurt agent-run` would run it, with a temporary HOME.

const BINARY = agentBinary(droidAdapter);
const installed = await Deno.stat(BINARY).then((info) => info.isFile, () => false);
if (!installed) {
  console.log(`skipping the run of droid: ${BINARY} is missing (install.sh installs it)`);
}
const STRACE = await new Deno.Command("strace", { args: ["-V"], stdout: "null", stderr: "null" })
  .output().then((out) => out.success, () => false);
if (installed && !STRACE) console.log("strace is missing: connects are seen by the proxy alone");

/** A stand-in for Factory's API as the box answers it with no FACTORY_API_KEY: 404 to all. */
function startFactoryStub(): { url: string; paths: string[]; close(): Promise<void> } {
  const paths: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.body?.cancel();
    paths.push(`${req.method} ${new URL(req.url).pathname}`);
    return Response.json({ error: "not found" }, { status: 404 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    paths,
    close: () => server.shutdown(),
  };
}

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

interface DroidRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The addresses it connected to (seen by strace; none without it). */
  connects: string[];
}

async function runDroid(
  context: AgentContext,
  session: { id: string; resume: boolean } | null,
  network: { factory: string; proxy: string },
): Promise<DroidRun> {
  const home = context.home;
  for (const [relative, text] of Object.entries(droidAdapter.files(context))) {
    const path = `${home}/${relative}`;
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, text);
  }
  const { args, env } = droidAdapter.command(context, session);
  const proxy = network.proxy;
  const environment: Record<string, string> = {
    PATH: "/usr/bin:/bin",
    HOME: home,
    ...env,
    // In a task the box answers api.factory.ai itself; here a local stub does, for every
    // Factory host Droid would reach.
    FACTORY_API_BASE_URL: network.factory,
    FACTORY_TELEMETRY_INGEST_BASE_URL: network.factory,
    OTEL_PRODUCT_ENDPOINT: network.factory,
    OTEL_CUSTOMER_ENDPOINT: network.factory,
    HTTPS_PROXY: proxy,
    HTTP_PROXY: proxy,
    ALL_PROXY: proxy,
    https_proxy: proxy,
    http_proxy: proxy,
    all_proxy: proxy,
    NO_PROXY: "127.0.0.1,localhost",
    no_proxy: "127.0.0.1,localhost",
  };
  const trace = `${home}/strace.txt`;
  const argv = STRACE
    ? ["strace", "-f", "-qq", "-e", "trace=connect", "-o", trace, BINARY, ...args]
    : [BINARY, ...args];
  const out = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    env: environment,
    clearEnv: true,
    cwd: home,
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

/** A Messages request's messages, as text. */
function conversation(body: Json): string {
  return JSON.stringify(body.messages);
}

Deno.test({
  name:
    "droid 0.215.0 with these files lists the box's tools, loads them with ToolSearch, calls example__echo, answers, and resumes with -s, reaching no host but the fake and Factory's stand-in",
  ignore: !installed,
  fn: async () => {
    const home = await Deno.makeTempDir({ prefix: "gurt-droid-" });
    const fake = startFakeAnthropicDroid();
    const factory = startFactoryStub();
    const proxy = startRecordingProxy();
    try {
      const log = `${home}/stand-in.jsonl`;
      const context: AgentContext = {
        ...CONTEXT,
        model: null,
        home,
        mcp: standInMcp(log),
        endpoint: { ...CONTEXT.endpoint, anthropic: fake.url, openai: `${fake.url}/v1` },
      };
      const network = { factory: factory.url, proxy: proxy.url };

      const first = await runDroid(context, null, network);
      const lines = first.stdout.split("\n").filter((line) => line !== "");
      const session = droidAdapter.sessionIn(lines[0]);
      assert(
        session !== null,
        `no session on droid's first line:\n${first.stdout}\n${first.stderr}`,
      );
      assertEquals(droidAdapter.outcome(first.stdout, first.code), {
        session,
        answer: "FINAL: echo: hi from droid",
        ok: true,
      }, first.stdout + first.stderr);

      // The stand-in was listed before the first model request, and called once, by the box's name.
      const events = await readStandInLog(log);
      assertEquals(events.filter((e) => e.event === "call"), [
        { event: "call", name: "example__echo", arguments: { text: "hi from droid" } },
      ]);
      const requests = fake.messages();
      const [opening, loaded] = requests.map((request) => request.body);
      assertEquals([opening.model, opening.max_tokens], [DROID_DEFAULT_MODEL, 32_000]);
      assertStringIncludes(conversation(opening), "box___example__echo"); // Deferred tools: …
      assertStringIncludes(conversation(opening), "Say hi through the box.");
      const system = (opening.system as { text: string }[]).map((block) => block.text).join("\n");
      assertStringIncludes(system, DROID_TOOLS_PROMPT);
      const offered = (loaded.tools as { name: string }[]).map((tool) => tool.name);
      assert(offered.includes("box___example__echo"), offered.join(", "));
      // The placeholder key is what Droid sends; the box's endpoint puts the vault's in its place.
      for (const request of requests) {
        assertEquals(request.headers["x-api-key"], "gurt-placeholder-key");
        assertStringIncludes(request.headers["user-agent"] ?? "", "factory-cli/0.215.0");
      }

      // Resumed: Droid asks Factory for the session, takes the 404, and goes on from its own file.
      const before = requests.length;
      const second = await runDroid(context, { id: session, resume: true }, network);
      const resumed = droidAdapter.outcome(second.stdout, second.code);
      assertEquals(resumed, {
        session,
        answer: "FINAL: echo: hi from droid",
        ok: true,
      }, second.stdout + second.stderr);
      const again = fake.messages()[before].body;
      assertStringIncludes(conversation(again), "FINAL: echo: hi from droid");
      assertStringIncludes(conversation(again), DROID_RESUME_PROMPT);
      assert(factory.paths.includes(`GET /api/sessions/${session}`), factory.paths.join("\n"));

      // Nothing else was reached: no request through the proxy, no connect off loopback (strace
      // saw the fake's own, so it was looking).
      assertEquals(proxy.seen, []);
      const connects = [...first.connects, ...second.connects];
      if (STRACE) assert(connects.includes("127.0.0.1"), connects.join(", "));
      assertEquals(connects.filter((address) => !loopback(address)), []);
    } finally {
      proxy.close();
      await factory.close();
      await fake.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});

Deno.test("Droid's custom model speaks its provider's API: an Anthropic-shaped gateway's claude model on Messages, an OpenRouter claude on Responses", () => {
  const gateway = settingsOf({
    ...CONTEXT,
    model: "gateway/sonnet",
    modelApi: { model: "gateway/sonnet", api: "anthropic" },
  }).settings.customModels[0];
  assertEquals([gateway.model, gateway.provider, gateway.baseUrl], [
    "gateway/sonnet",
    "anthropic",
    "http://127.0.0.1:4100",
  ]);
  const routed = settingsOf({
    ...CONTEXT,
    model: "openrouter/claude-sonnet-4.5",
    modelApi: { model: "openrouter/claude-sonnet-4.5", api: "openai-responses" },
  }).settings.customModels[0];
  assertEquals([routed.provider, routed.baseUrl], ["openai", "http://127.0.0.1:4100/v1"]);
  // The API said of another model than the one Droid runs changes nothing.
  const other = settingsOf({
    ...CONTEXT,
    model: "claude-sonnet-4-5",
    modelApi: { model: "gateway/sonnet", api: "openai-chat" },
  }).settings.customModels[0];
  assertEquals(other.provider, "anthropic");
});

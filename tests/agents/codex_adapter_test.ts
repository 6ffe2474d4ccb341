/**
 * The Codex adapter (issue 20): its settings file, command line and output reading as data, and the
 * real Codex CLI 0.171.0 run with those settings in a temporary HOME against the scripted fake
 * Responses service and the stand-in MCP server, with every proxy variable on a recording proxy
 * that refuses: it lists and calls example__echo, its final answer is read, it resumes its session,
 * and nothing but the fake is asked.
 */
import { parse } from "smol-toml";
import type { AgentContext } from "../../mod/agents/adapter.ts";
import {
  CODEX_CONFIG_FILE,
  CODEX_DEFAULT_MODEL,
  CODEX_RESUME_PROMPT,
  codexAdapter,
} from "../../mod/agents/codex.ts";
import { agentBinary } from "../../mod/agents/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  type FakeResponses,
  resultText,
  startFakeResponses,
} from "../../mod/stand-in/responses.ts";
import { readStandInLog, standInMcp } from "./stand_in_mcp.ts";

const CONTEXT: AgentContext = {
  prompt: "Say hi through the box.",
  model: null,
  home: "/var/lib/gurt/tasks/t1/home",
  mcp: {
    command: "/usr/local/bin/gurt",
    args: ["mcp"],
    env: { BOX_SOCKET: "/run/gurt/t1.sock", BOX_TASK: "t1" },
  },
  endpoint: {
    anthropic: "http://127.0.0.1:4100",
    openai: "http://127.0.0.1:4100/v1",
    placeholder: "gurt-placeholder-key",
  },
  mcpWaitMs: 50_000,
};

/** The settings file as Codex reads it. */
function written(context: AgentContext): Record<string, unknown> {
  const files = codexAdapter.files(context);
  assertEquals(Object.keys(files), [CODEX_CONFIG_FILE]);
  // Plain objects (smol-toml's tables have no prototype).
  return JSON.parse(JSON.stringify(parse(files[CODEX_CONFIG_FILE])));
}

/** Every key path of a parsed TOML document, e.g. "mcp_servers.box.env.BOX_TASK". */
function keyPaths(value: unknown, prefix = ""): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [prefix];
  return Object.entries(value).flatMap(([key, inner]) =>
    keyPaths(inner, prefix === "" ? key : `${prefix}.${JSON.stringify(key)}`)
  );
}

Deno.test("Codex's config.toml names the task's endpoint, the box's required MCP server with a call timeout above gurt mcp's wait, no approvals, and nothing else to reach", () => {
  assertEquals(written(CONTEXT), {
    model: CODEX_DEFAULT_MODEL,
    model_provider: "gurt",
    approval_policy: "never",
    sandbox_mode: "danger-full-access",
    web_search: "disabled",
    check_for_update_on_startup: false,
    analytics: { enabled: false },
    features: { plugins: false },
    model_providers: {
      gurt: {
        name: "gurt model endpoint",
        base_url: "http://127.0.0.1:4100/v1",
        env_key: "OPENAI_API_KEY",
        wire_api: "responses",
      },
    },
    mcp_servers: {
      box: {
        command: "/usr/local/bin/gurt",
        args: ["mcp"],
        env: { BOX_SOCKET: "/run/gurt/t1.sock", BOX_TASK: "t1" },
        env_vars: ["DENO_DIR", "DENO_NO_UPDATE_CHECK", "NO_COLOR"],
        required: true,
        startup_timeout_sec: 60,
        tool_timeout_sec: 80,
      },
    },
  });
  // The call timeout follows the wait, in whole seconds above it.
  const box = (context: AgentContext) =>
    (written(context).mcp_servers as Record<string, Record<string, unknown>>).box;
  assertEquals(box({ ...CONTEXT, mcpWaitMs: 170_500 }).tool_timeout_sec, 201);
  assertEquals(written({ ...CONTEXT, model: "gpt-5" }).model, "gpt-5");
  // The placeholder itself is never in the file: Codex reads it from OPENAI_API_KEY.
  assert(!codexAdapter.files(CONTEXT)[CODEX_CONFIG_FILE].includes("gurt-placeholder-key"));
});

Deno.test("a model, path or MCP value with quotes, newlines and TOML syntax in it is one string in Codex's config.toml and adds no key", () => {
  const evil = "x\"\nsandbox_mode = \"read-only\"\n[evil]\nkey = 1\n'''\\u0041 \u0000\u2028";
  const context: AgentContext = {
    ...CONTEXT,
    model: evil,
    home: `/home/"${evil}`,
    mcp: {
      command: `/bin/${evil}`,
      args: [evil, "]", "[x]"],
      env: { BOX_SOCKET: evil, [`K"]\n[evil2]\nk`]: evil },
    },
    endpoint: { ...CONTEXT.endpoint, openai: `http://127.0.0.1:4100/v1"\nevil = 1` },
  };
  const config = written(context);
  assertEquals(config.model, evil);
  assertEquals(config.sandbox_mode, "danger-full-access");
  const box = (config.mcp_servers as Record<string, Record<string, unknown>>).box;
  assertEquals(box.command, `/bin/${evil}`);
  assertEquals(box.args, [evil, "]", "[x]"]);
  assertEquals(box.env, { BOX_SOCKET: evil, [`K"]\n[evil2]\nk`]: evil });
  const provider = (config.model_providers as Record<string, Record<string, unknown>>).gurt;
  assertEquals(provider.base_url, `http://127.0.0.1:4100/v1"\nevil = 1`);
  // The same keys as the plain file's, but for the env entry named by the evil key.
  const plain = keyPaths(written(CONTEXT)).filter((path) => !path.includes("BOX_TASK"));
  const seen = keyPaths(config).filter((path) => !path.includes("evil2"));
  assertEquals(seen.sort(), plain.sort());
});

Deno.test("codex exec's command line: JSON events, no git check, strict config, the prompt after --, CODEX_HOME in the task's home; resume names the session", () => {
  assertEquals(codexAdapter.command(CONTEXT, null), {
    args: [
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--strict-config",
      "--",
      "Say hi through the box.",
    ],
    env: { CODEX_HOME: "/var/lib/gurt/tasks/t1/home/.codex" },
  });
  const named = codexAdapter.command({ ...CONTEXT, model: "-gpt", prompt: "--help me" }, null);
  assertEquals(named.args.slice(4), ["--model=-gpt", "--", "--help me"]);
  // A prompt of only "-" would be read from stdin (/dev/null).
  assertEquals(codexAdapter.command({ ...CONTEXT, prompt: "-" }, null).args.at(-1), "- ");
  const id = "01a23507-6df0-7f12-8907-ce08d3804df1";
  assertEquals(codexAdapter.command(CONTEXT, { id, resume: true }).args, [
    "exec",
    "resume",
    "--json",
    "--skip-git-repo-check",
    "--strict-config",
    "--",
    id,
    CODEX_RESUME_PROMPT,
  ]);
  assertEquals(codexAdapter.choosesSession, false);
  assertEquals(codexAdapter.package.name, "@openai/codex");
  assertEquals(codexAdapter.package.version, "0.171.0");
});

/** Codex 0.171.0's --json output of a run that called the box's tool (measured). */
const RUN = [
  { type: "thread.started", thread_id: "01a23507-6df0-7f12-8907-ce08d3804df1" },
  {
    type: "item.completed",
    item: { id: "item_0", type: "error", message: "Model metadata for `gpt-5-codex` not found." },
  },
  { type: "turn.started" },
  {
    type: "item.completed",
    item: {
      id: "item_1",
      type: "mcp_tool_call",
      server: "box",
      tool: "example__echo",
      arguments: { text: "hi" },
      result: { content: [{ type: "text", text: "echo: hi" }] },
      error: null,
      status: "completed",
    },
  },
  { type: "item.completed", item: { id: "item_2", type: "agent_message", text: "Working on it." } },
  {
    type: "item.completed",
    item: { id: "item_3", type: "agent_message", text: "FINAL: echo: hi" },
  },
  { type: "turn.completed", usage: { input_tokens: 200, output_tokens: 40 } },
].map((event) => JSON.stringify(event)).join("\n") + "\n";

Deno.test("Codex's output: the session from thread.started, the last agent message as the answer, ok only for turn.completed and exit 0", () => {
  const session = "01a23507-6df0-7f12-8907-ce08d3804df1";
  assertEquals(codexAdapter.sessionIn(RUN.split("\n")[0]), session);
  assertEquals(codexAdapter.sessionIn('{"type":"turn.started"}'), null);
  assertEquals(codexAdapter.sessionIn("Reading additional input from stdin..."), null);
  assertEquals(codexAdapter.sessionIn('{"type":"thread.started","thread_id":7}'), null);
  assertEquals(codexAdapter.outcome(RUN, 0), { session, answer: "FINAL: echo: hi", ok: true });
  assertEquals(codexAdapter.outcome(RUN, 1).ok, false);
  // A model service's refusal: turn.failed, exit 1 (measured with a 400).
  const failed = RUN.split("\n").slice(0, 3).join("\n") +
    '\n{"type":"error","message":"400"}\n{"type":"turn.failed","error":{"message":"400"}}\n';
  assertEquals(codexAdapter.outcome(failed, 1), { session, answer: null, ok: false });
  assertEquals(codexAdapter.outcome(failed, 0).ok, false);
  // Cut short before its turn ended (stopped, say): no end, not ok.
  assertEquals(codexAdapter.outcome(RUN.split("\n").slice(0, 4).join("\n"), 0), {
    session,
    answer: null,
    ok: false,
  });
  assertEquals(codexAdapter.outcome("", 0), { session: null, answer: null, ok: false });
});

// The real Codex CLI.

const BINARY = agentBinary(codexAdapter);
const installed = (() => {
  try {
    return Deno.statSync(BINARY).isFile;
  } catch {
    return false;
  }
})();
if (!installed) console.log(`skipping the real Codex run: no ${BINARY} (./install.sh installs it)`);

/** A proxy that records the first line of every connection made to it and refuses it. */
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

interface CodexRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real Codex as agent-run would: the adapter's command, in the home, stdin /dev/null. */
async function runCodex(
  context: AgentContext,
  session: { id: string; resume: boolean } | null,
  proxy: string,
): Promise<CodexRun> {
  const command = codexAdapter.command(context, session);
  const child = new Deno.Command(BINARY, {
    args: command.args,
    cwd: context.home,
    clearEnv: true,
    env: {
      HOME: context.home,
      PATH: "/usr/bin:/bin",
      OPENAI_API_KEY: context.endpoint.placeholder,
      // Every host but loopback goes to the recording proxy, as a task's go to its egress proxy.
      HTTPS_PROXY: proxy,
      HTTP_PROXY: proxy,
      ALL_PROXY: proxy,
      https_proxy: proxy,
      http_proxy: proxy,
      all_proxy: proxy,
      NO_PROXY: "localhost,127.0.0.1,::1",
      no_proxy: "localhost,127.0.0.1,::1",
      // Passed on to the MCP server by name (env_vars); the other is not.
      NO_COLOR: "1",
      GURT_TEST_NOT_PASSED: "1",
      ...command.env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // Codex retries an unreachable model for ever: a run that hangs fails the test.
    signal: AbortSignal.timeout(120_000),
  }).spawn();
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}

/** The text of one request body's input (for searching it). */
function inputOf(body: Record<string, unknown>): string {
  return JSON.stringify(body.input);
}

Deno.test({
  name:
    "the real Codex CLI with the adapter's settings lists the box's tools, calls example__echo in namespace mcp__box, answers, resumes its session, and asks nothing but the model endpoint",
  ignore: !installed,
  fn: async () => {
    // Not under /tmp: Codex refuses to put its helper links in a temporary folder.
    const home = await Deno.makeTempDir({ dir: "/var/tmp", prefix: "gurt-codex-" });
    const fake: FakeResponses = startFakeResponses({ agent: "codex" });
    const proxy = startRecordingProxy();
    try {
      const log = `${home}/stand-in.jsonl`;
      const standIn = standInMcp(log);
      delete standIn.env.NO_COLOR; // it comes through env_vars instead
      const prompt = "--help \"quoted\" 'single'\nline two $HOME `x`";
      const context: AgentContext = {
        ...CONTEXT,
        prompt,
        home,
        mcp: standIn,
        endpoint: { ...CONTEXT.endpoint, openai: `${fake.url}/v1` },
      };
      for (const [path, text] of Object.entries(codexAdapter.files(context))) {
        await Deno.mkdir(`${home}/${path.slice(0, path.lastIndexOf("/"))}`, { recursive: true });
        await Deno.writeTextFile(`${home}/${path}`, text);
      }

      const first = await runCodex(context, null, proxy.url);
      const all = `${first.stdout}\n${first.stderr}`;
      const session = codexAdapter.sessionIn(first.stdout.split("\n")[0]);
      assert(session !== null, `no session on codex's first line:\n${all}`);
      assertEquals(codexAdapter.outcome(first.stdout, first.code), {
        session,
        answer: "FINAL: echo: hi from codex",
        ok: true,
      }, all);

      // The stand-in was started with NO_COLOR passed on by name, listed, and called once.
      const events = await readStandInLog(log);
      const start = events.find((event) => event.event === "start");
      assert(start !== undefined && start.event === "start", JSON.stringify(events));
      assert(start.env.includes("NO_COLOR"), start.env.join(" "));
      assert(start.env.includes("STAND_IN_LOG"), start.env.join(" "));
      assert(!start.env.includes("GURT_TEST_NOT_PASSED"), start.env.join(" "));
      assert(!start.env.includes("OPENAI_API_KEY"), start.env.join(" "));
      assert(events.some((event) => event.event === "list"), JSON.stringify(events));
      assertEquals(events.filter((event) => event.event === "call"), [
        { event: "call", name: "example__echo", arguments: { text: "hi from codex" } },
      ]);

      // The model saw the prompt whole and the box's tool in its namespace, on the default model.
      const [opening, answered] = fake.turns();
      assertEquals(opening.model, CODEX_DEFAULT_MODEL);
      assertStringIncludes(inputOf(opening), JSON.stringify(prompt).slice(1, -1));
      const namespace = (opening.tools as Record<string, unknown>[])
        .find((tool) => tool.type === "namespace" && tool.name === "mcp__box");
      assert(namespace !== undefined, JSON.stringify(opening.tools));
      const inner = (namespace.tools as { name: string }[]).map((tool) => tool.name);
      assertEquals(inner, ["example__echo"]);
      assert(!JSON.stringify(opening.tools).includes('"web_search"'), "web search is offered");
      const output = (answered.input as Record<string, unknown>[]).at(-1);
      assertEquals(output?.type, "function_call_output");
      assertEquals(resultText(output?.output), "echo: hi from codex");
      // Every request went to the Responses path with the placeholder key.
      for (const request of fake.requests) {
        assertEquals(`${request.method} ${request.path}`, "POST /v1/responses");
        assertEquals(request.headers.authorization, "Bearer gurt-placeholder-key");
      }

      // Resumed: the same thread, its history sent again, told to carry on.
      const before = fake.turns().length;
      const second = await runCodex(context, { id: session, resume: true }, proxy.url);
      assertEquals(codexAdapter.outcome(second.stdout, second.code), {
        session,
        answer: "FINAL: echo: hi from codex",
        ok: true,
      }, `${second.stdout}\n${second.stderr}`);
      const again = fake.turns()[before];
      assertStringIncludes(inputOf(again), JSON.stringify(prompt).slice(1, -1));
      assertStringIncludes(inputOf(again), "FINAL: echo: hi from codex");
      assertStringIncludes(inputOf(again), CODEX_RESUME_PROMPT);

      // Nothing went anywhere but the fake: no connection reached the proxy.
      assertEquals(proxy.seen, []);
    } finally {
      proxy.close();
      await fake.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});

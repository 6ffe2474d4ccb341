/** The Claude Code adapter's settings, command line and reading of its output, without running it. */
import { assert, assertEquals } from "../assert.ts";
import { adapterOf, type AgentContext } from "../../mod/agents/mod.ts";

const claude = adapterOf("claude");

const context: AgentContext = {
  prompt: '--help me; tidy "notes"\nnow',
  model: null,
  home: "/box/tasks/t1/home",
  mcp: { command: "/usr/bin/deno", args: ["run", "main.ts", "mcp"], env: { BOX_SOCKET: "/s" } },
  endpoint: {
    anthropic: "http://127.0.0.1:4100",
    openai: "http://127.0.0.1:4100/v1",
    placeholder: "gurt-placeholder-key",
  },
  mcpWaitMs: 50_000,
};

Deno.test("Claude Code's settings name only the box's MCP server, as gurt mcp --permission-tool runs in the task, and skip WebFetch's preflight to api.anthropic.com", () => {
  const files = claude.files(context);
  assertEquals(Object.keys(files), [
    ".config/gurt/claude-mcp.json",
    ".config/gurt/claude-settings.json",
  ]);
  // The box answers api.anthropic.com with the model endpoint only: an allowed WebFetch goes
  // straight to the task's egress proxy.
  assertEquals(JSON.parse(files[".config/gurt/claude-settings.json"]), {
    skipWebFetchPreflight: true,
  });
  const config = JSON.parse(files[".config/gurt/claude-mcp.json"]);
  assertEquals(Object.keys(config.mcpServers), ["box"]);
  const box = config.mcpServers.box;
  // Only Claude Code's settings use box_permission, so only its server lists it.
  assertEquals([box.type, box.command, box.args, box.env], [
    "stdio",
    "/usr/bin/deno",
    ["run", "main.ts", "mcp", "--permission-tool"],
    { BOX_SOCKET: "/s" },
  ]);
  // Claude Code waits longer for a call of the box's than gurt mcp holds one.
  assert(box.timeout > context.mcpWaitMs);
  // No key of any kind: the model endpoint holds them.
  for (const text of Object.values(files)) assert(!text.includes("placeholder"));
});

Deno.test("Claude Code runs with -p, its JSON output, the box's server only, its own permission prompts sent to box_permission, the chosen session and the prompt after --", () => {
  const fresh = claude.command(context, { id: "5f0c", resume: false });
  const args = fresh.args;
  const value = (flag: string) => args[args.indexOf(flag) + 1];
  assertEquals(args[0], "-p");
  assertEquals(value("--output-format"), "json");
  assertEquals(value("--mcp-config"), "/box/tasks/t1/home/.config/gurt/claude-mcp.json");
  assert(args.includes("--strict-mcp-config"));
  // Whatever it would ask its user goes to the owner: no mode that denies (dontAsk) or skips it.
  assert(!args.includes("--permission-mode"), args.join(" "));
  assert(!args.includes("--dangerously-skip-permissions"));
  assertEquals(value("--permission-prompt-tool"), "mcp__box__box_permission");
  assertEquals(value("--settings"), "/box/tasks/t1/home/.config/gurt/claude-settings.json");
  // The box's tools (the grants decide) and its own shell and file tools run without asking.
  assertEquals(value("--allowedTools").split(","), [
    "mcp__box",
    "Bash",
    "Edit",
    "Write",
    "NotebookEdit",
  ]);
  assert(!value("--allowedTools").includes("WebFetch"));
  assertEquals(value("--model"), "claude-sonnet-4-5");
  assertEquals(value("--session-id"), "5f0c");
  assert(!args.includes("--resume"));
  // A prompt that begins with "-" is still the prompt: it comes last, after --.
  assertEquals(args.slice(-2), ["--", context.prompt]);
  assertEquals(fresh.env, {
    ENABLE_TOOL_SEARCH: "false",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  });

  const resumed = claude.command({ ...context, model: "claude-opus-4-5" }, {
    id: "5f0c",
    resume: true,
  });
  const again = (flag: string) => resumed.args[resumed.args.indexOf(flag) + 1];
  assertEquals(again("--resume"), "5f0c");
  assertEquals(again("--permission-prompt-tool"), "mcp__box__box_permission");
  assertEquals(again("--model"), "claude-opus-4-5");
  assert(!resumed.args.includes("--session-id"));
  assert(resumed.args.at(-1)!.startsWith("gurt restarted this task"));
});

Deno.test("Claude Code's JSON result gives the session, the final answer and whether it finished", () => {
  const result = (fields: Record<string, unknown>) =>
    JSON.stringify({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "FINAL: hi",
      session_id: "5f0c",
      ...fields,
    });
  assertEquals(claude.sessionIn(result({})), "5f0c");
  assertEquals(claude.sessionIn("not json"), null);
  assertEquals(claude.outcome(result({}) + "\n", 0), {
    session: "5f0c",
    answer: "FINAL: hi",
    ok: true,
  });
  const failed = result({ is_error: true, result: "API Error: 400", subtype: "success" });
  assertEquals(claude.outcome(failed, 1), {
    session: "5f0c",
    answer: "API Error: 400",
    ok: false,
  });
  assertEquals(claude.outcome(result({ subtype: "error_max_turns" }), 0).ok, false);
  assertEquals(claude.outcome("", 1), { session: null, answer: null, ok: false });
  assertEquals(claude.outcome('garbage\n{"type":"other"}\n', 0).answer, null);
});

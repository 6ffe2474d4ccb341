/**
 * Claude Code (`@anthropic-ai/claude-code`) as a task's worker: `claude -p` with its JSON output,
 * the box's MCP server from a file of gurt's (`--strict-mcp-config`: no other server), and
 * permissions that let it use the box's tools and its own shell and file tools without asking.
 * Anything else it would ask its user (WebFetch, WebSearch and the like) goes to
 * `gurt mcp`'s box_permission (`--permission-prompt-tool`), which asks the box owner: an approval
 * in `gurt approvals`. gurt chooses the session id (`--session-id`) and resumes it with `--resume`.
 * Its model is the task's, else claude-sonnet-4-5. Measured on 2.1.332
 * (README.md#coding-agents-as-workers).
 */
import type { AgentAdapter, AgentCommand, AgentContext, AgentOutcome } from "./adapter.ts";
import { nonEmptyString, objectOf, objectsOf, textOf } from "./output_lines.ts";

/** The model a task that names none runs with. */
export const CLAUDE_DEFAULT_MODEL = "claude-sonnet-4-5";

/** Where the box's MCP server is written, relative to the task's home. */
export const CLAUDE_MCP_FILE = ".config/gurt/claude-mcp.json";

/**
 * The tools Claude Code may use without asking: the box's (every `mcp__box__*`, decided by the
 * grants) and its own shell and file tools, which act only inside the task's sandbox. Tools that
 * only read need no permission; for the rest (WebFetch among them) it asks, and the owner answers
 * (CLAUDE_PERMISSION_TOOL).
 */
export const CLAUDE_ALLOWED_TOOLS = ["mcp__box", "Bash", "Edit", "Write", "NotebookEdit"];

/**
 * Where Claude Code sends the permission prompts it would show its user: gurt mcp's box_permission,
 * which makes each one an /ask of the owner's. In -p, without it (or with `--permission-mode
 * dontAsk`), such a prompt is denied and the model is told so; the default mode, which asks, is
 * kept.
 */
export const CLAUDE_PERMISSION_TOOL = "mcp__box__box_permission";

/** What a resumed run is told: the conversation it resumes holds the task. */
export const CLAUDE_RESUME_PROMPT =
  "gurt restarted this task after an interruption. Carry on where you left off and finish the task.";

/** Where its settings are written, relative to the task's home. */
export const CLAUDE_SETTINGS_FILE = ".config/gurt/claude-settings.json";

/**
 * Its settings. `skipWebFetchPreflight`: WebFetch otherwise first asks api.anthropic.com whether
 * the domain may be fetched, and in a task the box answers that host with the model endpoint only,
 * so every fetch failed ("Unable to verify if domain … is safe to fetch") even once the owner
 * allowed it. Without it, an allowed fetch goes through the task's egress proxy: a host on the
 * task's list is fetched, any other is blocked and shows as net.blocked.
 */
const CLAUDE_SETTINGS = { skipWebFetchPreflight: true };

/** How much longer than gurt mcp's own wait Claude Code lets a call of the box's take, in ms. */
const CALL_SLACK_MS = 60_000;

function files(context: AgentContext): Record<string, string> {
  const box = {
    type: "stdio",
    command: context.mcp.command,
    // Only Claude Code's settings send box_permission anything: only its server lists it.
    args: [...context.mcp.args, "--permission-tool"],
    env: context.mcp.env,
    timeout: context.mcpWaitMs + CALL_SLACK_MS,
  };
  return {
    [CLAUDE_MCP_FILE]: JSON.stringify({ mcpServers: { box } }, null, 2) + "\n",
    [CLAUDE_SETTINGS_FILE]: JSON.stringify(CLAUDE_SETTINGS, null, 2) + "\n",
  };
}

function command(
  context: AgentContext,
  session: { id: string; resume: boolean } | null,
): AgentCommand {
  const args = [
    "-p",
    "--output-format",
    "json",
    "--mcp-config",
    `${context.home}/${CLAUDE_MCP_FILE}`,
    "--strict-mcp-config",
    "--allowedTools",
    CLAUDE_ALLOWED_TOOLS.join(","),
    "--permission-prompt-tool",
    CLAUDE_PERMISSION_TOOL,
    "--settings",
    `${context.home}/${CLAUDE_SETTINGS_FILE}`,
    "--model",
    context.model ?? CLAUDE_DEFAULT_MODEL,
  ];
  if (session !== null) args.push(session.resume ? "--resume" : "--session-id", session.id);
  // After `--`, a prompt that begins with "-" is still the prompt.
  args.push("--", session?.resume ? CLAUDE_RESUME_PROMPT : context.prompt);
  return {
    args,
    env: {
      // MCP tools are otherwise hidden behind its ToolSearch tool.
      ENABLE_TOOL_SEARCH: "false",
      // No telemetry, update check or error report: only the model endpoint is asked.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
    },
  };
}

function sessionIn(line: string): string | null {
  return nonEmptyString(objectOf(line)?.session_id);
}

function outcome(stdout: string, code: number): AgentOutcome {
  // `--output-format json` prints one object, the result; the last such line is it.
  const result = objectsOf(stdout).reverse()
    .find((value) => value !== null && value.type === "result");
  if (result === undefined || result === null) return { session: null, answer: null, ok: false };
  const answer = textOf(result.result);
  const session = textOf(result.session_id);
  const ok = code === 0 && result.is_error !== true && result.subtype === "success";
  return { session, answer, ok };
}

/** Claude Code. */
export const claudeAdapter: AgentAdapter = {
  name: "claude",
  package: {
    name: "@anthropic-ai/claude-code",
    version: "2.1.332",
    // The native binary the package's postinstall puts in place of its placeholder.
    bin: "node_modules/@anthropic-ai/claude-code/bin/claude.exe",
  },
  files,
  choosesSession: true,
  command,
  sessionIn,
  outcome,
};

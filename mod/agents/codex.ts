/**
 * OpenAI's Codex CLI (`@openai/codex`, 0.171.0) as a task's worker: `codex exec --json`, whose
 * first line names the session (its thread), with its settings in `~/.codex/config.toml`
 * (CODEX_HOME is set to that folder):
 *
 * - the model: the task's, else gpt-5-codex, from a provider `gurt` at the task's OpenAI endpoint
 *   (OPENAI_BASE_URL) with the placeholder key (OPENAI_API_KEY, sent as a bearer token), on the
 *   Responses API, the only one Codex speaks;
 * - the box's MCP server, `required` (else `codex exec` asks the model before a slow server has
 *   listed its tools, and the box's tools are missing from the whole run), with a call timeout
 *   above gurt mcp's wait, so the agent sees the "call again" text and not a timeout;
 * - permission: approvals `never` and sandbox `danger-full-access`. gurt's task sandbox is the
 *   boundary and the grants decide every call of the box's; under Codex's own sandboxes an MCP
 *   tool not annotated read-only needs an approval `codex exec` cannot ask for, so the call fails;
 * - nothing else reached: no web search (a server-side tool of the model service), no analytics
 *   (ab.chatgpt.com), no plugins (a git clone of github.com, api.github.com, chatgpt.com), no
 *   update check. Measured: with these, the fake model service is the only host asked.
 *
 * The file is written with smol-toml, so no value (the model a task names, a path) can add a key.
 * `--strict-config` makes Codex refuse a key it does not know rather than ignore it. Measured on
 * 0.171.0 (README.md#coding-agents-as-workers): the default call timeout is 300 s; an unreachable
 * model endpoint is retried for as long as the run lasts ("Reconnecting... waiting for network").
 */
import { stringify } from "smol-toml";
import type { AgentAdapter, AgentCommand, AgentContext, AgentOutcome } from "./adapter.ts";
import { nonEmptyString, objectOf } from "./output_lines.ts";

/** The model a task that names none runs with. */
export const CODEX_DEFAULT_MODEL = "gpt-5-codex";

/** Codex's own folder (CODEX_HOME), relative to the task's home. */
export const CODEX_HOME_DIR = ".codex";

/** Where its settings are written, relative to the task's home. */
export const CODEX_CONFIG_FILE = `${CODEX_HOME_DIR}/config.toml`;

/** The model provider gurt's settings name: the task's model endpoint. */
export const CODEX_PROVIDER = "gurt";

/** What a resumed run is told: the conversation it resumes holds the task. */
export const CODEX_RESUME_PROMPT =
  "gurt restarted this task after an interruption. Carry on where you left off and finish the task.";

/** How much longer than gurt mcp's own wait Codex lets a call of the box's take, in seconds. */
const CALL_SLACK_SECONDS = 30;

/** How long Codex waits for gurt mcp to start and list its tools, in seconds (its default is 10). */
const MCP_STARTUP_SECONDS = 60;

/**
 * Variables of the worker's that Codex passes on to gurt mcp, besides the few it always passes
 * (HOME, PATH, LANG, TMPDIR, …) and the server's own `env`: where Deno keeps its cache, and quiet.
 */
const MCP_PASSED_ENV = ["DENO_DIR", "DENO_NO_UPDATE_CHECK", "NO_COLOR"];

const HEADER = "# Written by gurt at every start of this task: a change here does not last.\n";

/** The settings gurt writes for Codex, as the TOML file holds them. */
export function codexConfig(context: AgentContext): Record<string, unknown> {
  return {
    model: context.model ?? CODEX_DEFAULT_MODEL,
    model_provider: CODEX_PROVIDER,
    approval_policy: "never",
    sandbox_mode: "danger-full-access",
    web_search: "disabled",
    check_for_update_on_startup: false,
    analytics: { enabled: false },
    features: { plugins: false },
    model_providers: {
      [CODEX_PROVIDER]: {
        name: "gurt model endpoint",
        base_url: context.endpoint.openai,
        // The variable holds the placeholder; the endpoint puts the vault's key in its place.
        env_key: "OPENAI_API_KEY",
        wire_api: "responses",
      },
    },
    mcp_servers: {
      box: {
        command: context.mcp.command,
        args: context.mcp.args,
        env: context.mcp.env,
        env_vars: MCP_PASSED_ENV,
        required: true,
        startup_timeout_sec: MCP_STARTUP_SECONDS,
        tool_timeout_sec: Math.ceil(context.mcpWaitMs / 1000) + CALL_SLACK_SECONDS,
      },
    },
  };
}

function files(context: AgentContext): Record<string, string> {
  return { [CODEX_CONFIG_FILE]: HEADER + stringify(codexConfig(context)) };
}

function command(
  context: AgentContext,
  session: { id: string; resume: boolean } | null,
): AgentCommand {
  const resume = session !== null && session.resume;
  const args = ["exec", ...(resume ? ["resume"] : [])];
  args.push("--json", "--skip-git-repo-check", "--strict-config");
  // `--model=` keeps a model name that begins with "-" a value; the file names it too.
  if (context.model !== null) args.push(`--model=${context.model}`);
  // After `--`, a prompt that begins with "-" is still the prompt; one that is only "-" would be
  // read from stdin, which is /dev/null.
  const prompt = resume ? CODEX_RESUME_PROMPT : context.prompt === "-" ? "- " : context.prompt;
  args.push("--", ...(resume ? [session.id] : []), prompt);
  return { args, env: { CODEX_HOME: `${context.home}/${CODEX_HOME_DIR}` } };
}

function sessionIn(line: string): string | null {
  const event = objectOf(line);
  if (event === null || event.type !== "thread.started") return null;
  return nonEmptyString(event.thread_id);
}

function outcome(stdout: string, code: number): AgentOutcome {
  let session: string | null = null;
  let answer: string | null = null;
  // The last turn's end: turn.completed, or turn.failed (the model service refused, say).
  let ended: string | null = null;
  for (const line of stdout.split("\n")) {
    session ??= sessionIn(line);
    const event = objectOf(line);
    if (event === null) continue;
    if (event.type === "turn.completed" || event.type === "turn.failed") ended = event.type;
    const item = event.item as Record<string, unknown> | undefined;
    if (
      event.type === "item.completed" && typeof item === "object" && item !== null &&
      item.type === "agent_message" && typeof item.text === "string"
    ) {
      answer = item.text;
    }
  }
  return { session, answer, ok: code === 0 && ended === "turn.completed" };
}

/** The platform package npm installs beside the launcher, and the binary's folder in it. */
const PLATFORM = Deno.build.arch === "aarch64"
  ? { package: "@openai/codex-linux-arm64", target: "aarch64-unknown-linux-musl" }
  : { package: "@openai/codex-linux-x64", target: "x86_64-unknown-linux-musl" };

/** Codex CLI. */
export const codexAdapter: AgentAdapter = {
  name: "codex",
  package: {
    name: "@openai/codex",
    version: "0.171.0",
    // The native binary its Node launcher (bin/codex.js) would exec; it needs no Node.
    bin: `node_modules/${PLATFORM.package}/vendor/${PLATFORM.target}/bin/codex`,
  },
  files,
  choosesSession: false,
  command,
  sessionIn,
  outcome,
};

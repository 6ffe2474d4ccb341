/**
 * OpenCode (`opencode-ai`) as a task's worker: `opencode run --format json`, its settings in
 * `~/.config/opencode/opencode.json` with one provider, `gurt`, at the task's model endpoint with
 * the placeholder key (Anthropic's Messages for a `claude-*` model, OpenAI's Responses for OpenAI's
 * own, Chat Completions for any other: the three AI SDK packages bundled in its binary), the box's
 * MCP server as `box` (its tools are `box_<app>__<verb>`), and permissions that let it call them
 * without asking (in `run` an "ask" is an automatic refusal). Its session id (`ses_…`) is in every
 * event it prints; `-s` resumes it. Its model is the task's, else gpt-5. Measured on 1.18.33
 * (README.md#coding-agents-as-workers).
 */
import type { AgentAdapter, AgentCommand, AgentContext, AgentOutcome } from "./adapter.ts";
import { nonEmptyString, objectOf, objectsOf } from "./output_lines.ts";

/** The model a task that names none runs with. */
export const OPENCODE_DEFAULT_MODEL = "gpt-5";

/** OpenCode's global settings file, relative to the task's home. */
export const OPENCODE_CONFIG_FILE = ".config/opencode/opencode.json";

/** The provider gurt writes: models are `gurt/<model>`. */
export const OPENCODE_PROVIDER = "gurt";

/** What a resumed run is told: the conversation it resumes holds the task. */
export const OPENCODE_RESUME_PROMPT =
  "gurt restarted this task after an interruption. Carry on where you left off and finish the task.";

/** How much longer than gurt mcp's own wait OpenCode lets a call of the box's take, in ms. */
const CALL_SLACK_MS = 30_000;

/** The wire a model is spoken to in, by its name. */
export type OpencodeWire = "anthropic" | "openai" | "openai-compatible";

/**
 * The wire of a model: Anthropic's Messages for `claude-*`; OpenAI's Responses for OpenAI's own
 * models (`gpt-*`, `o1`, `o3`, `o4…`, `codex-*`), which refuse Chat Completions' `max_tokens` that
 * `@ai-sdk/openai-compatible` always sends; Chat Completions for any other (a model the endpoint's
 * OpenAI-compatible target serves, such as vLLM or llama.cpp).
 */
export function opencodeWire(model: string): OpencodeWire {
  if (model.startsWith("claude-")) return "anthropic";
  if (/^(gpt-|o[134](-|$)|codex-)/.test(model)) return "openai";
  return "openai-compatible";
}

/** The wire of a model the owner's provider serves: its API's; null for any other model. */
export function providedWire(
  model: string,
  provided: AgentContext["modelApi"],
): OpencodeWire | null {
  if (provided === undefined || provided === null || provided.model !== model) return null;
  if (provided.api === "anthropic") return "anthropic";
  return provided.api === "openai-responses" ? "openai" : "openai-compatible";
}

/** The provider entry for the task's model, on the task's model endpoint. */
function provider(context: AgentContext, model: string): Record<string, unknown> {
  const models = { [model]: { name: model } };
  const wire = providedWire(model, context.modelApi) ?? opencodeWire(model);
  if (wire === "anthropic") {
    return {
      npm: "@ai-sdk/anthropic",
      name: "gurt",
      // The SDK posts to `${baseURL}/messages`; ANTHROPIC_BASE_URL is an origin.
      options: {
        baseURL: `${context.endpoint.anthropic}/v1`,
        apiKey: context.endpoint.placeholder,
      },
      models,
    };
  }
  return {
    npm: wire === "openai" ? "@ai-sdk/openai" : "@ai-sdk/openai-compatible",
    name: "gurt",
    options: { baseURL: context.endpoint.openai, apiKey: context.endpoint.placeholder },
    models,
  };
}

/**
 * JSON text that OpenCode reads back as `value`: it replaces `{env:NAME}` and `{file:PATH}` in
 * the file's text before parsing it, so a value holding one (a hostile model name) would pull in an
 * environment variable or a file. The brace that opens one is written as `\u007b`, which only the
 * JSON parser reads, after the substitution. (A brace of the JSON's own is never followed by
 * `env:` or `file:`.)
 */
export function opencodeJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/\{(?=(env|file):)/g, "\\u007b") + "\n";
}

/** The lock that tells OpenCode its plugin package is installed in its settings folder. */
const PLUGIN_LOCK = {
  name: "opencode",
  lockfileVersion: 3,
  packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } },
};

function files(context: AgentContext): Record<string, string> {
  const model = context.model ?? OPENCODE_DEFAULT_MODEL;
  const config = {
    $schema: "https://opencode.ai/config.json",
    model: `${OPENCODE_PROVIDER}/${model}`,
    // The title of the session is asked of the same model (no other is configured).
    small_model: `${OPENCODE_PROVIDER}/${model}`,
    provider: { [OPENCODE_PROVIDER]: provider(context, model) },
    // Only gurt's provider: none of the catalog's, whose keys the task does not have.
    enabled_providers: [OPENCODE_PROVIDER],
    mcp: {
      box: {
        type: "local",
        command: [context.mcp.command, ...context.mcp.args],
        environment: context.mcp.env,
        enabled: true,
        // Also each call's limit (60 s when unset): longer than gurt mcp holds a waiting call.
        timeout: context.mcpWaitMs + CALL_SLACK_MS,
      },
    },
    permission: {
      // The grants decide the box's tools (MCP tools are allowed by default; said here so that a
      // new default does not make them ask).
      "box_*": "allow",
      // A call that waits for the owner is made again with the same input, one call an answer:
      // OpenCode's loop guard (doom_loop, "ask", so refused in `run`) looks at the calls of one
      // answer only, so it is left as it is.
    },
    share: "disabled",
    autoupdate: false,
  };
  return {
    [OPENCODE_CONFIG_FILE]: opencodeJson(config),
    // At every start OpenCode installs @opencode-ai/plugin (for plugins of the user's own) into
    // its settings folder from registry.npmjs.org unless node_modules is there and the lock lists
    // it: in a task that is a blocked request each run. The task has no plugins.
    ".config/opencode/package-lock.json": JSON.stringify(PLUGIN_LOCK, null, 2) + "\n",
    ".config/opencode/node_modules/.gurt":
      "gurt: no plugins are installed for OpenCode in a task.\n",
  };
}

function command(
  context: AgentContext,
  session: { id: string; resume: boolean } | null,
): AgentCommand {
  const model = context.model ?? OPENCODE_DEFAULT_MODEL;
  const args = ["run", "--format", "json", "-m", `${OPENCODE_PROVIDER}/${model}`];
  if (session !== null) args.push("-s", session.id);
  // After `--`, a prompt that begins with "-" is still the prompt. `run` joins its words with a
  // space after quoting each word that holds one (escaping its quotes): given as words split at
  // each space, none is quoted and the join is the prompt itself.
  const prompt = session?.resume ? OPENCODE_RESUME_PROMPT : context.prompt;
  args.push("--", ...prompt.split(" "));
  return {
    args,
    env: {
      // The models catalog (models.opencode.ai) and the update check are not fetched.
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_SHARE: "1",
      // Language servers are not downloaded.
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    },
  };
}

function sessionIn(line: string): string | null {
  return nonEmptyString(objectOf(line)?.sessionID);
}

function outcome(stdout: string, code: number): AgentOutcome {
  const events = objectsOf(stdout).filter((event) => event !== null);
  let session: string | null = null;
  let answer: string | null = null;
  let failed = false;
  for (const event of events) {
    session = nonEmptyString(event.sessionID) ?? session;
    if (event.type === "error") failed = true;
    const part = event.part as Record<string, unknown> | undefined;
    if (event.type === "text" && typeof part?.text === "string") answer = part.text;
  }
  // A run that printed no event at all did not start its work (a settings error goes to stderr).
  return { session, answer, ok: code === 0 && !failed && events.length > 0 };
}

/** OpenCode. */
export const opencodeAdapter: AgentAdapter = {
  name: "opencode",
  package: {
    name: "opencode-ai",
    version: "1.18.33",
    // The native binary the package's postinstall copies from the platform package that fits the
    // machine (opencode-linux-x64, or its baseline or musl build).
    bin: "node_modules/opencode-ai/bin/opencode.exe",
  },
  files,
  choosesSession: false,
  command,
  sessionIn,
  outcome,
};

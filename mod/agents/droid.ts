/**
 * Factory's Droid (`droid`, 0.215.0) as a task's worker: `droid exec` with its streamed JSON
 * output (its first line names the session, so a crash after it still leaves one to resume), the
 * box's MCP server in `~/.factory/mcp.json`, and its model chosen as README.md#droid says:
 *
 * - FACTORY_API_KEY in the vault (`services.factory`): Droid uses Factory's own models. Its calls
 *   go to api.factory.ai, which the box answers itself with the vault's key in place of the task's
 *   placeholder FACTORY_API_KEY. `-m` names the task's model (a Factory model id), else Factory's
 *   default.
 * - Otherwise it brings the box's key: `~/.factory/settings.json` lists a custom model at the
 *   task's model endpoint with the placeholder key: the task's model, else the box's (BOX_MODEL,
 *   else `[models] model`, as GET /model says), else claude-sonnet-5-5, on
 *   the Anthropic endpoint (a model not named claude-* on the OpenAI one, Responses), and Haiku
 *   beside it. Factory's own paths still go to api.factory.ai, which the box answers 404 without a
 *   Factory key; a 404 is what lets `-s` resume from the local session file (measured: a network
 *   error there fails the run).
 *
 * Permission: `--auto high`. Droid's own tools act only inside the task's sandbox, and the grants
 * decide every call of the box's; below high, Droid ends the run at the first unannotated or
 * destructive MCP tool ("insufficient permission"), and by default it writes no file. A
 * PreToolUse hook answering "allow" would do for the box's tools alone, but its command must be a
 * program in the task.
 *
 * Its questions to the user: `droid exec` offers the model no AskUser (Droid enables it only in its
 * terminal and interactive modes, whatever `--add-tools` says), so the box's server offers
 * box_ask_user in its place (`gurt mcp --ask-user-tool`, mod/mcp/ask_user.ts), AskUser's input
 * and format, and the system prompt says to use it: each questionnaire is an /ask approval of the
 * owner's, and their yes, or no with their words, is its result.
 *
 * The box's tools: Droid 0.215.0 defers every MCP tool of a server whose name lacks "github" (the
 * model sees only their names and loads them with its ToolSearch tool), so Droid's system prompt
 * says how to load them all at once, and `blockOnMcpLoad` makes Droid start the box's server and
 * list its tools before the first model request (without it, a server slower than the first
 * answer is missing from that session).
 */
import type { AgentAdapter, AgentCommand, AgentContext, AgentOutcome } from "./adapter.ts";
import { objectOf, objectsOf, textOf } from "./output_lines.ts";

/** The model of a task that names none, when Droid brings the box's key (README.md#droid). */
export const DROID_DEFAULT_MODEL = "claude-sonnet-5-5";

/** The small model listed beside it, which Droid checks risky steps with (README.md#droid). */
export const DROID_CHECK_MODEL = "claude-haiku-4-5";

/**
 * The most output tokens one answer of a custom model may ask for: Droid's own for the Claude
 * models it knows (it asks 128,000 for one it does not, more than Anthropic's models allow and
 * what the box charges a stream cut short).
 */
export const DROID_MAX_OUTPUT_TOKENS = 32_000;

/** Factory's API, which the box intercepts: Droid's telemetry is sent there too. */
export const DROID_FACTORY_ORIGIN = "https://api.factory.ai";

/** Appended to Droid's system prompt: how to load the box's deferred tools. */
export const DROID_TOOLS_PROMPT =
  "The box's tools (an MCP server named box) are how this task reaches anything outside its " +
  "sandbox: each is named box___<tool>, for example box___example__echo. They are deferred: " +
  'before your first step, load them all with one call of ToolSearch with {"query":"+box___",' +
  '"max_results":100}, then call them by name. A box tool whose result says the call waits for ' +
  "the owner's approval may be called again later with the same input. This run has no AskUser " +
  "tool: to ask the user (the box's owner) a question, call box___box_ask_user with AskUser's " +
  "questionnaire, never end your answer with a question.";

/** What a resumed run is told: the session it resumes holds the task. */
export const DROID_RESUME_PROMPT =
  "gurt restarted this task after an interruption. Carry on where you left off and finish the task.";

/** The custom models' display names; Droid's id for one is custom:<name, - for spaces>-<n>. */
const MAIN_NAME = "Box Model";
const CHECK_NAME = "Box Haiku";
const MAIN_ID = "custom:Box-Model-0";

/** How much longer than gurt mcp's own wait Droid lets a call of the box's take, in ms. */
const CALL_SLACK_MS = 60_000;

/** The ids Droid names its sessions with (UUIDs), and nothing a command line could misread. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

interface CustomModel {
  model: string;
  displayName: string;
  provider: "anthropic" | "openai";
  baseUrl: string;
  apiKey: string;
  maxOutputTokens: number;
}

function customModel(context: AgentContext, model: string, displayName: string): CustomModel {
  // A model the owner's provider serves is spoken in its API (Droid's "openai" is Responses).
  const provided = context.modelApi?.model === model ? context.modelApi.api : null;
  const anthropic = provided === null ? model.startsWith("claude-") : provided === "anthropic";
  return {
    model,
    displayName,
    provider: anthropic ? "anthropic" : "openai",
    baseUrl: anthropic ? context.endpoint.anthropic : context.endpoint.openai,
    apiKey: context.endpoint.placeholder,
    maxOutputTokens: DROID_MAX_OUTPUT_TOKENS,
  };
}

/**
 * The model of Droid's bring-your-own-key run (seed 003): the task's, else the box's (BOX_MODEL,
 * else gurt.toml's `[models] model`), else claude-sonnet-5-5.
 */
export function droidModel(context: Pick<AgentContext, "model" | "boxModel">): string {
  return context.model ?? context.boxModel ?? DROID_DEFAULT_MODEL;
}

function usesFactory(context: AgentContext): boolean {
  return context.services?.factory === true;
}

function files(context: AgentContext): Record<string, string> {
  const customModels = usesFactory(context) ? [] : [
    customModel(context, droidModel(context), MAIN_NAME),
    customModel(context, DROID_CHECK_MODEL, CHECK_NAME),
  ];
  const settings = { customModels, blockOnMcpLoad: true };
  const box = {
    type: "stdio",
    command: context.mcp.command,
    // Droid's AskUser questions go to box_ask_user: only its server lists it.
    args: [...context.mcp.args, "--ask-user-tool"],
    env: context.mcp.env,
    timeout: context.mcpWaitMs + CALL_SLACK_MS,
  };
  return {
    ".factory/settings.json": JSON.stringify(settings, null, 2) + "\n",
    ".factory/mcp.json": JSON.stringify({ mcpServers: { box } }, null, 2) + "\n",
  };
}

function command(
  context: AgentContext,
  session: { id: string; resume: boolean } | null,
): AgentCommand {
  const args = [
    "exec",
    "--output-format",
    "stream-json",
    "--auto",
    "high",
    "--append-system-prompt",
    DROID_TOOLS_PROMPT,
  ];
  if (!usesFactory(context)) args.push("-m", MAIN_ID);
  else if (context.model !== null) args.push("-m", context.model);
  if (session !== null) {
    if (!SESSION_ID.test(session.id)) {
      throw new Error(
        `gurt agent-run droid: ${
          JSON.stringify(session.id)
        } is not a Droid session id (letters, digits, - and _), so it is not resumed`,
      );
    }
    // Droid names its own sessions: an id is always one to resume.
    args.push("-s", session.id);
  }
  // After `--`, a prompt that begins with "-" is still the prompt.
  args.push("--", session === null ? context.prompt : DROID_RESUME_PROMPT);
  return {
    args,
    env: {
      FACTORY_DROID_AUTO_UPDATE_ENABLED: "false",
      // Else to telemetry.factory.ai and a collector on run.app, hosts off every task's list.
      // Droid 0.215.0 has two OpenTelemetry exporters: product metrics (OTEL_PRODUCT_ENDPOINT)
      // and its session metrics, whose endpoint is OTEL_CUSTOMER_ENDPOINT or the run.app one.
      FACTORY_TELEMETRY_INGEST_BASE_URL: DROID_FACTORY_ORIGIN,
      OTEL_PRODUCT_ENDPOINT: DROID_FACTORY_ORIGIN,
      OTEL_CUSTOMER_ENDPOINT: DROID_FACTORY_ORIGIN,
    },
  };
}

function sessionOf(event: Record<string, unknown> | null): string | null {
  const session = event?.session_id;
  return typeof session === "string" && SESSION_ID.test(session) ? session : null;
}

function sessionIn(line: string): string | null {
  return sessionOf(objectOf(line));
}

/**
 * `-o stream-json` prints one event a line: system init (with the session), messages, tool calls
 * and results, then `completion` (its finalText the answer) or `error` events. `-o json`'s one
 * `result` object is read too.
 */
function outcome(stdout: string, code: number): AgentOutcome {
  let session: string | null = null;
  let finished: string | null = null;
  let failed = false;
  let said: string | null = null;
  const errors: string[] = [];
  for (const event of objectsOf(stdout)) {
    if (event === null) continue;
    session = sessionOf(event) ?? session;
    if (event.type === "completion") finished = textOf(event.finalText) ?? "";
    if (event.type === "result") {
      said = textOf(event.result) ?? said;
      if (event.subtype === "success" && event.is_error !== true) finished = said ?? "";
      else failed = true;
    }
    if (event.type === "message" && event.role === "assistant") said = textOf(event.text) ?? said;
    if (event.type === "error") {
      failed = true;
      const message = textOf(event.message);
      if (message !== null) errors.unshift(message);
    }
  }
  const ok = code === 0 && finished !== null && !failed;
  const answer = finished ?? said ?? (errors.length > 0 ? errors.join(": ") : null);
  return { session, answer, ok };
}

/** Droid. */
export const droidAdapter: AgentAdapter = {
  name: "droid",
  package: {
    name: "droid",
    version: "0.215.0",
    // The native binary the package's postinstall hard-links in place of its Node launcher.
    bin: "node_modules/droid/bin/droid",
  },
  files,
  choosesSession: false,
  command,
  sessionIn,
  outcome,
};

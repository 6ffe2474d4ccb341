/**
 * Claude Code's own permission prompts as the owner's approvals. Run with
 * `--permission-prompt-tool mcp__box__box_permission`, Claude Code calls `box_permission` with
 * `{tool_name, input, tool_use_id}` whenever it would ask its user whether it may use one of its own
 * tools (WebFetch, WebSearch and the like), and reads the tool's one text as JSON:
 * `{"behavior":"allow","updatedInput":…}` runs the tool with that input,
 * `{"behavior":"deny","message":…}` gives the message to the model as the tool's result.
 *
 * The relay (relay_main.ts) asks the owner through /ask with the question this file writes. Pure:
 * no I/O, nothing loaded.
 */

/** A permission prompt, checked. */
export interface PermissionPrompt {
  /** The agent's tool it would use. */
  toolName: string;
  /** The input it would use the tool with, exactly as the agent sent it. */
  input: Record<string, unknown>;
}

/** The longest rendering of a tool's name in the question, in characters. */
const MAX_TOOL_CHARS = 100;

/** The longest rendering of a tool's input in the question, in characters. */
const MAX_INPUT_CHARS = 600;

/** A tool name shown as it is; any other is shown quoted. */
const PLAIN_TOOL_NAME = /^[A-Za-z0-9_.:-]+$/;

/**
 * Characters that could hide or disguise text the owner reads: controls, format characters (the
 * direction overrides, zero-width ones), private use, lone surrogates, line and paragraph
 * separators.
 */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Zl}\p{Zp}]/gu;

/** The prompt in a call's arguments, or the sentence that says what is wrong with them. */
export function readPermissionPrompt(args: Record<string, unknown>): PermissionPrompt | string {
  const { tool_name: toolName, input } = args;
  if (typeof toolName !== "string" || toolName === "") {
    return "box_permission takes Claude Code's permission prompt, {tool_name, input, tool_use_id}: tool_name must name the tool.";
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return "box_permission takes Claude Code's permission prompt, {tool_name, input, tool_use_id}: input must be the tool_name tool's input, an object.";
  }
  return { toolName, input: input as Record<string, unknown> };
}

/**
 * The question the owner is asked: the agent's tool and its input as JSON, each cut to a bound and
 * with every character that could hide text written as a \u escape.
 */
export function permissionQuestion(prompt: PermissionPrompt): string {
  const name = PLAIN_TOOL_NAME.test(prompt.toolName) && prompt.toolName.length <= MAX_TOOL_CHARS
    ? prompt.toolName
    : shownText(JSON.stringify(prompt.toolName), MAX_TOOL_CHARS);
  return `Claude Code asks to use ${name} with ${
    shownText(JSON.stringify(prompt.input), MAX_INPUT_CHARS)
  }`;
}

/** Claude Code's answer that lets the tool run with its input unchanged. */
export function allowAnswer(prompt: PermissionPrompt): string {
  return JSON.stringify({ behavior: "allow", updatedInput: prompt.input });
}

/** Claude Code's answer that refuses the tool: `message` is what the model is told. */
export function denyAnswer(message: string): string {
  return JSON.stringify({ behavior: "deny", message });
}

/** What the model is told when the owner did not allow the use: refused (with their reason), or expired. */
export function refusedMessage(prompt: PermissionPrompt, reason: string | null): string {
  const tool = toolShown(prompt);
  return reason === null
    ? `The box owner did not allow this use of ${tool} (refused, or not answered in time).`
    : `The box owner refused this use of ${tool}: ${reason}`;
}

/** What the model is told when the owner has not answered yet: the approval, and to call again. */
export function pendingMessage(prompt: PermissionPrompt, approval: number | null): string {
  const which = approval === null ? "" : ` (approval ${approval})`;
  return `Waiting for the box owner to allow this use of ${
    toolShown(prompt)
  }${which}. Call this tool again to check.`;
}

/** The tool's name as the model is told it: the same bound and escapes as the owner's question. */
function toolShown(prompt: PermissionPrompt): string {
  return shownText(prompt.toolName, MAX_TOOL_CHARS);
}

/**
 * `text` cut to `max` characters (counting code points) with the count cut, then every character
 * that could hide text written as a \u escape: how a question shows what an agent sent.
 */
export function shownText(text: string, max: number): string {
  const chars = Array.from(text);
  const kept = chars.length <= max
    ? text
    : `${chars.slice(0, max).join("")}… (${chars.length - max} more characters)`;
  return kept.replace(HIDDEN, escapeChar);
}

function escapeChar(char: string): string {
  let escaped = "";
  for (let i = 0; i < char.length; i++) {
    escaped += `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`;
  }
  return escaped;
}

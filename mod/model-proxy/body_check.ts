/**
 * The check of a model request's body (runbook.md#model-proxy-refused): the model service must not
 * reach anything for the task, since it would reach it around the task's host list. The whole JSON
 * value is walked, at every depth (a tool_result's content, a function call's output and a
 * message's blocks included), and the first thing that would make the service fetch is named with
 * where it is. Tools are held to an allowlist of the tools a client runs itself, so a new server
 * tool's version is refused until it is known. Pure.
 *
 * What the service reads as data and never as content is not walked: a tool's input schema or
 * parameters, a structured output's schema, and the input of a tool call the model made. A
 * property named `file_id` in a tool's schema asks the service to fetch nothing.
 *
 * What the service keeps for the owner's account is refused too, since the request would act on
 * what the box never read: a stored prompt (`prompt: {id}`, which can carry hosted tools), an
 * earlier response (`previous_response_id`), a conversation (`conversation`), a stored item
 * (`{"type": "item_reference"}`), any of which another task may have made. The agents send the whole
 * conversation each time (Codex, OpenCode and Droid on OpenAI's Responses say `store: false`).
 */
import type { Service } from "./routes.ts";

/** Why a request was refused. */
export type RefusalReason =
  | "mcp_server"
  | "mcp_tool"
  | "server_tool"
  | "url_source"
  | "file_reference"
  | "remote_image"
  | "remote_file"
  | "web_search_options"
  | "stored_reference";

/** A refused request: why, what in a few words, and where in the body (`tools[2]`). */
export interface Refusal {
  reason: RefusalReason;
  what: string;
  at: string;
}

/**
 * Anthropic tools the client runs itself: custom tools (no `type`, or `custom`) and the versions of
 * bash, the text editor, computer use and memory, each a name and a date.
 */
const ANTHROPIC_CLIENT_TOOL = /^(?:bash|text_editor|computer|memory)_\d+$/;

/**
 * OpenAI tools the client runs itself: functions, custom (free-form) tools, the local shell, shell
 * (only in the client's own environment: see clientTool) and apply_patch, and computer use, whose
 * actions the client carries out. A namespace only groups tools under a name (Codex offers an MCP
 * server's tools so): the walk holds each tool in it to this list too.
 */
const OPENAI_CLIENT_TOOLS = new Set([
  "function",
  "namespace",
  "custom",
  "local_shell",
  "shell",
  "apply_patch",
  "computer_use_preview",
]);

/** Keys whose values are schemas: data for the service, never content it acts on. */
const SCHEMA_KEYS = new Set(["input_schema", "parameters", "schema"]);

/** Block types whose `input` is a tool call's arguments, written by the model. */
const CALL_BLOCKS = new Set(["tool_use", "server_tool_use"]);

type Fields = Record<string, unknown>;

/** The longest path a refusal names in full. */
const MOST_PATH = 400;

/** A value still to be walked, with the way back to the body's root for its path. */
interface Frame {
  value: unknown;
  key: string | number | null;
  up: Frame | null;
}

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `messages[2].content[0].source` for a frame. */
function pathOf(frame: Frame, last?: string | number): string {
  const keys: (string | number)[] = last === undefined ? [] : [last];
  for (let at: Frame | null = frame; at !== null && at.key !== null; at = at.up) keys.push(at.key);
  keys.reverse();
  let path = "";
  for (const key of keys) {
    if (typeof key === "number") path += `[${key}]`;
    else {path += /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)
        ? (path === "" ? key : `.${key}`)
        : `[${JSON.stringify(key)}]`;}
  }
  if (path === "") return "the body";
  // A path through a body nested thousands deep is cut in the middle: its ends say where it is.
  return path.length <= MOST_PATH ? path : `${path.slice(0, 150)}…${path.slice(-240)}`;
}

/** Whether a tool is one the client runs itself. */
function clientTool(service: Service, tool: Fields): boolean {
  const type = tool.type;
  if (service === "anthropic") {
    return type === undefined || type === "custom" ||
      (typeof type === "string" && ANTHROPIC_CLIENT_TOOL.test(type));
  }
  if (type === "shell") {
    // `environment: {type: "container_auto"}` (or any but "local") runs the commands in OpenAI's
    // own container, which reaches the network around the task's host list.
    const environment = tool.environment;
    return environment === undefined || environment === null ||
      (isObject(environment) && environment.type === "local");
  }
  return typeof type === "string" && OPENAI_CLIENT_TOOLS.has(type);
}

/** Top-level Responses fields that name what the service keeps, and what each is in a sentence. */
const STORED_FIELDS: readonly { key: string; what: string }[] = [
  { key: "prompt", what: "a stored prompt" },
  { key: "previous_response_id", what: "an earlier response the service keeps" },
  { key: "conversation", what: "a conversation the service keeps" },
];

/** A tool_choice that is not a client tool's (nor `allowed_tools`, whose tools are each checked). */
function hostedChoice(choice: unknown): boolean {
  if (!isObject(choice)) return false;
  if (choice.type === "allowed_tools") return false;
  return !(typeof choice.type === "string" && OPENAI_CLIENT_TOOLS.has(choice.type));
}

/**
 * The refusal for the body's own top-level fields, or null: a reference to what the service keeps,
 * a tool_choice that forces a hosted tool (`{"type": "web_search_preview"}`), and an OpenAI model
 * that searches the web on every request (gpt-4o-search-preview, gpt-5-search-api), which does so
 * without any tool asking.
 */
function topRefusal(service: Service, body: unknown): Refusal | null {
  if (service !== "openai" || !isObject(body)) return null;
  for (const { key, what } of STORED_FIELDS) {
    // An empty string or null names nothing (an SDK may send `previous_response_id: null`).
    if (given(body[key]) && body[key] !== "") return { reason: "stored_reference", what, at: key };
  }
  if (hostedChoice(body.tool_choice)) {
    const type = JSON.stringify((body.tool_choice as Fields).type) ?? "no type";
    return {
      reason: "server_tool",
      what: `a tool_choice of type ${type}, which the service would run itself`,
      at: "tool_choice",
    };
  }
  if (typeof body.model === "string" && /search/i.test(body.model)) {
    return {
      reason: "web_search_options",
      what: "a model that searches the web on every request",
      at: "model",
    };
  }
  return null;
}

/** Whether a value asks for something: present, and neither null nor an empty list. */
function given(value: unknown): boolean {
  return value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);
}

/** Whether an image URL points anywhere but the request itself (a `data:` URL). */
function remoteUrl(value: unknown): boolean {
  const url = isObject(value) ? value.url : value;
  return typeof url === "string" && !/^data:/i.test(url.trimStart());
}

/** The refusal for one object of the body, looked at alone, or null. */
function objectRefusal(service: Service, fields: Fields, frame: Frame): Refusal | null {
  if (given(fields.mcp_servers)) {
    return { reason: "mcp_server", what: "an MCP server", at: pathOf(frame, "mcp_servers") };
  }
  if (fields.type === "mcp_toolset" || fields.type === "mcp") {
    return { reason: "mcp_tool", what: `an MCP tool (${fields.type})`, at: pathOf(frame) };
  }
  if (Array.isArray(fields.tools)) {
    for (let i = 0; i < fields.tools.length; i++) {
      const tool = fields.tools[i];
      if (!isObject(tool) || clientTool(service, tool)) continue;
      const type = JSON.stringify(tool.type) ?? "no type";
      return {
        reason: tool.type === "mcp" || tool.type === "mcp_toolset" ? "mcp_tool" : "server_tool",
        what: `a tool of type ${type}, which the service would run itself`,
        at: pathOf(frame, "tools").concat(`[${i}]`),
      };
    }
  }
  if (fields.type === "item_reference") {
    return { reason: "stored_reference", what: "an item the service keeps", at: pathOf(frame) };
  }
  const source = fields.source;
  if (isObject(source) && source.type === "url") {
    return { reason: "url_source", what: "content by URL", at: pathOf(frame, "source") };
  }
  if (isObject(source) && source.type === "file") {
    return { reason: "file_reference", what: "a stored file", at: pathOf(frame, "source") };
  }
  if (given(fields.file_id)) {
    return { reason: "file_reference", what: "a stored file", at: pathOf(frame, "file_id") };
  }
  if ("image_url" in fields && remoteUrl(fields.image_url)) {
    return {
      reason: "remote_image",
      what: "an image by URL (only data: URLs are sent)",
      at: pathOf(frame, "image_url"),
    };
  }
  if (given(fields.file_url)) {
    return { reason: "remote_file", what: "a file by URL", at: pathOf(frame, "file_url") };
  }
  if (given(fields.web_search_options)) {
    return {
      reason: "web_search_options",
      what: "a web search",
      at: pathOf(frame, "web_search_options"),
    };
  }
  return null;
}

/**
 * The first thing in `body` that would make `service` reach something for the task, or null.
 * The walk keeps its own stack, so a body nested deeper than the call stack is walked too; the
 * body's model is looked at after it, so a field that asks is named before the model.
 */
export function findRefusal(body: unknown, service: Service): Refusal | null {
  const stack: Frame[] = [{ value: body, key: null, up: null }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const value = frame.value;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        if (typeof value[i] === "object" && value[i] !== null) {
          stack.push({ value: value[i], key: i, up: frame });
        }
      }
      continue;
    }
    if (!isObject(value)) continue;
    const refusal = objectRefusal(service, value, frame);
    if (refusal !== null) return refusal;
    const call = typeof value.type === "string" && CALL_BLOCKS.has(value.type);
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const item = value[key];
      if (typeof item !== "object" || item === null) continue;
      if (SCHEMA_KEYS.has(key) || (call && key === "input")) continue;
      stack.push({ value: item, key, up: frame });
    }
  }
  return topRefusal(service, body);
}

/**
 * The task's tools as MCP lists them: GET /tools' listing (docs/broker-api.md#get-tools) with `.`
 * as `__`, and annotations from each tool's definition. A tool that changes nothing is
 * readOnlyHint; any other destructiveHint, which is what clients that gate on the hints need to
 * know (Codex runs only readOnlyHint tools under workspace-write without asking; Droid runs them
 * at its default autonomy). The title is gurt's own name of the tool, the one the owner sees in
 * grants and approvals.
 */
import { mcpName } from "./keys.ts";

/** One tool of GET /tools. */
export interface ToolListing {
  name: string;
  description: string;
  input: unknown;
  readOnly: boolean;
  /** An app's tool: its server's MCP annotations. */
  annotations?: Record<string, unknown>;
}

/** One tool as tools/list answers it. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: unknown;
  annotations: {
    title: string;
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

/** The MCP name of the question tool, which /ask answers. */
export const ASK_TOOL = "box_ask";

/** The question tool: asking the owner changes nothing on the box. */
const askTool: McpTool = {
  name: ASK_TOOL,
  description: "Asks the box owner a question and waits for a yes or no.",
  inputSchema: {
    type: "object",
    properties: { question: { type: "string" } },
    required: ["question"],
  },
  annotations: { title: "Ask the box owner", readOnlyHint: true, destructiveHint: false },
};

/** The MCP name of the tool Claude Code's own permission prompts go to (permission.ts). */
export const PERMISSION_TOOL = "box_permission";

/**
 * The permission prompt tool, listed only with `gurt mcp --permission-tool`. Not read-only:
 * allowing lets the agent act. The agent's model sees it too; calling it only asks the owner, as
 * box_ask does.
 */
const permissionTool: McpTool = {
  name: PERMISSION_TOOL,
  description: "For the agent's own permission prompts (Claude Code's --permission-prompt-tool): " +
    "asks the box owner whether the agent may use its tool tool_name with this input, and answers " +
    'Claude Code\'s {"behavior":"allow",...} or {"behavior":"deny","message":...}.',
  inputSchema: {
    type: "object",
    properties: {
      tool_name: { type: "string" },
      input: { type: "object" },
      tool_use_id: { type: "string" },
    },
    required: ["tool_name", "input"],
  },
  annotations: {
    title: "Ask the box owner for a permission",
    readOnlyHint: false,
    destructiveHint: false,
  },
};

/** The MCP name of the tool that takes Droid's AskUser questionnaires (ask_user.ts). */
export const ASK_USER_TOOL = "box_ask_user";

/**
 * Droid's AskUser, for `droid exec`, which has none: its input and format are AskUser's, listed
 * only with `gurt mcp --ask-user-tool`. Asking changes nothing on the box.
 */
const askUserTool: McpTool = {
  name: ASK_USER_TOOL,
  description: "Use this where you would use AskUser (this run has no AskUser): asks the user, " +
    "the box's owner, a questionnaire in AskUser's format and waits for the answer. The owner " +
    "answers yes or no: yes takes the first option of each question, so put the option you " +
    "recommend first; a no may come with the owner's own words. If the answer says it waits for " +
    "the owner, call this tool again with the same questionnaire.",
  inputSchema: {
    type: "object",
    properties: {
      questionnaire: {
        type: "string",
        description: "AskUser's plain-text questionnaire: numbered [question] lines, each with " +
          "an optional [topic] line and 2-4 [option] lines.",
      },
    },
    required: ["questionnaire"],
  },
  annotations: { title: "Ask the box owner", readOnlyHint: true, destructiveHint: false },
};

/**
 * The task's tools, then box_ask, then (with `permissionTool`) box_permission and (with
 * `askUserTool`) box_ask_user, as tools/list answers them.
 */
export function mcpTools(
  listing: readonly ToolListing[],
  options: { permissionTool: boolean; askUserTool?: boolean },
): McpTool[] {
  const tools = listing.map((tool): McpTool => {
    const readOnly = tool.readOnly === true;
    // An app's server's own hints, where it gave them as MCP defines them; the box's name is the title.
    const hint = (key: string) =>
      typeof tool.annotations?.[key] === "boolean"
        ? { [key]: tool.annotations[key] as boolean }
        : {};
    const destructive = tool.annotations?.destructiveHint;
    return {
      name: mcpName(tool.name),
      description: tool.description,
      inputSchema: tool.input,
      annotations: {
        title: tool.name,
        readOnlyHint: readOnly,
        destructiveHint: readOnly ? false : typeof destructive === "boolean" ? destructive : true,
        ...hint("idempotentHint"),
        ...hint("openWorldHint"),
      },
    };
  });
  return [
    ...tools,
    askTool,
    ...(options.permissionTool ? [permissionTool] : []),
    ...(options.askUserTool === true ? [askUserTool] : []),
  ];
}

/**
 * `gurt mcp`, the relay role: an MCP server on stdio that offers the task's tools (`.` as `__`)
 * plus `box_ask`, and with `--permission-tool` `box_permission` (Claude Code's own permission
 * prompts, permission.ts; without it, that name is any tool the task lacks), with
 * `--ask-user-tool` `box_ask_user` (Droid's AskUser questionnaires, ask_user.ts; likewise), and
 * forwards every call to the task socket. It holds no secrets. A pending answer and a denial come
 * back as plain text results, not errors, so the agent carries on.
 *
 * It answers initialize and tools/list within 150 ms of `gurt mcp` starting (some clients list
 * tools once, early, and miss a server that is slower): it loads no npm package, and reads the
 * task's tools from the socket while the client is still sending initialize.
 *
 * It declares MCP's `logging` capability: after `logging/setLevel`, the relay's own lines about
 * what it did (relay_log.ts says what they may hold: never an input, an output or a question) come
 * as `notifications/message` at or above that level.
 */
import denoJson from "../../deno.json" with { type: "json" };
import { postCall, requestJson, SocketUnreachableError } from "../net/mod.ts";
import { initializeAnswer, INVALID_PARAMS, type Method, RpcError, serveLines } from "./json_rpc.ts";
import { askKey, CallKeys, toolName } from "./keys.ts";
import {
  ASK_TOOL,
  ASK_USER_TOOL,
  mcpTools,
  PERMISSION_TOOL,
  type ToolListing,
} from "./mcp_tools.ts";
import {
  ANSWERED_YES,
  answeredNo,
  askUserQuestion,
  readQuestionnaire,
  waitingMessage,
} from "./ask_user.ts";
import {
  allowAnswer,
  denyAnswer,
  pendingMessage,
  permissionQuestion,
  readPermissionPrompt,
  refusedMessage,
} from "./permission.ts";
import type { RelayArgs } from "./relay_args.ts";
import { RelayLog, shownTool } from "./relay_log.ts";

/** What tools/call answers. */
interface ToolResult {
  content: ({ type: "text"; text: string } | Record<string, unknown>)[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Serves MCP on stdio until the client closes it. */
export default async function main(args: RelayArgs): Promise<number> {
  await serveLines(
    { input: Deno.stdin.readable, output: Deno.stdout.writable },
    (notify) => relayMethods(args, new RelayLog(notify)),
  );
  return 0;
}

/** The relay's methods; the task's tools are read at once, for the first tools/list. */
function relayMethods(args: RelayArgs, log: RelayLog): Record<string, Method> {
  const keys = new CallKeys();
  const prompts = new CallKeys();
  const questions = new CallKeys();
  let early: Promise<ToolListing[]> | null = readTools(args.socket);
  early.catch(() => {}); // tools/list reads them again
  return {
    initialize: (params) =>
      initializeAnswer(params, {
        name: "gurt",
        version: denoJson.version,
        capabilities: { tools: {}, logging: {} },
      }),
    ping: () => ({}),
    "logging/setLevel": (params) => log.setLevel(params),
    "tools/list": async () => {
      const first = early;
      early = null;
      let listing: ToolListing[];
      try {
        listing = await (first ?? readTools(args.socket)).catch(() => readTools(args.socket));
      } catch (error) {
        log.send("error", toolsUnread(error));
        throw error;
      }
      const tools = mcpTools(listing, {
        permissionTool: args.permissionTool,
        askUserTool: args.askUserTool === true,
      });
      log.send("debug", `tools/list: ${tools.length} tools, ${listing.length} of them the task's`);
      return { tools };
    },
    "tools/call": async (params) => {
      const { name, arguments: input = {} } = params;
      if (typeof name !== "string" || name === "") {
        throw new RpcError(INVALID_PARAMS, "Invalid params: tools/call needs the tool's name");
      }
      if (typeof input !== "object" || input === null || Array.isArray(input)) {
        throw new RpcError(INVALID_PARAMS, "Invalid params: a tool's arguments are an object");
      }
      log.send("debug", `tools/call: ${shownTool(name)}`);
      if (name === PERMISSION_TOOL && args.permissionTool) {
        return await permission(args, {
          keys: prompts,
          input: input as Record<string, unknown>,
          log,
        });
      }
      if (name === ASK_USER_TOOL && args.askUserTool === true) {
        return await askUser(args, {
          keys: questions,
          input: input as Record<string, unknown>,
          log,
        });
      }
      try {
        if (name === ASK_TOOL) {
          return await ask(args, { question: (input as { question?: unknown }).question, log });
        }
        return await call(args, { keys, tool: toolName(name), input, log });
      } catch (error) {
        if (!(error instanceof SocketUnreachableError)) throw error;
        log.send(
          "error",
          `${shownTool(name)}: the box could not be reached, so nothing was called`,
        );
        return {
          content: [{ type: "text", text: `The box could not be reached.` }],
          isError: true,
        };
      }
    },
  };
}

/** The log line for tools/list's failure: gurt's own sentence, never the error's own text. */
function toolsUnread(error: unknown): string {
  if (error instanceof SocketUnreachableError) {
    return "tools/list: the task's tools could not be read: the box could not be reached";
  }
  const status = error instanceof ToolsUnreadError ? ` (the core answered ${error.status})` : "";
  return `tools/list: the task's tools could not be read${status}`;
}

/** GET /tools answered another status than 200. */
class ToolsUnreadError extends Error {
  constructor(readonly status: number) {
    super(`the task's tools could not be read (the core answered ${status})`);
    this.name = "ToolsUnreadError";
  }
}

async function readTools(socket: string): Promise<ToolListing[]> {
  const answer = await requestJson(socket, { method: "GET", path: "/tools" });
  if (answer.status !== 200) {
    throw new ToolsUnreadError(answer.status);
  }
  return answer.body as ToolListing[];
}

async function call(
  args: RelayArgs,
  call: { keys: CallKeys; tool: string; input: unknown; log: RelayLog },
): Promise<ToolResult> {
  const key = await call.keys.key(call.tool, call.input);
  const { body } = await postCall(args.socket, {
    tool: call.tool,
    input: call.input,
    key,
    waitMs: args.waitMs,
  });
  const tool = shownTool(call.tool);
  if (body.ok) {
    call.keys.answered(key);
    call.log.send("info", `${tool}: answered`);
    return appResult(body.output) ?? text(JSON.stringify(body.output ?? null));
  }
  // A pending answer keeps the key, so calling again joins the same approval.
  if ("pending" in body) {
    call.log.send("notice", `${tool}: waiting for the box owner; the agent is told to call again`);
  } else {
    call.keys.answered(key);
    call.log.send(
      "warning",
      `${tool}: not run (denied, refused or failed; the agent has the text)`,
    );
  }
  return text(body.error);
}

async function ask(
  args: RelayArgs,
  asked: { question: unknown; log: RelayLog },
): Promise<ToolResult> {
  const { question, log } = asked;
  if (typeof question !== "string" || question === "") {
    log.send("warning", "box_ask: called without a question");
    return text("box_ask needs a question.");
  }
  const answer = await requestJson(args.socket, {
    method: "POST",
    path: "/ask",
    body: { question, key: await askKey(question), waitMs: args.waitMs },
  });
  const body = answer.body as { approved?: boolean; pending?: boolean; error?: string };
  if (body.pending === true) {
    log.send("notice", "box_ask: waiting for the box owner; the agent is told to ask again");
    return text("The box owner has not answered yet. Ask again with the same question to wait.");
  }
  if (answer.status !== 200) {
    log.send("warning", `box_ask: the core answered ${answer.status}`);
    return text(body.error ?? `the question failed (${answer.status})`);
  }
  log.send("info", "box_ask: the owner answered");
  return text(body.approved === true ? "The owner said yes." : "The owner said no.");
}

/** What the box's /ask answered: its status and its body, as the relay reads it. */
interface AskAnswer {
  status: number;
  body: {
    approved?: boolean;
    reason?: string;
    pending?: boolean;
    approval?: number;
    error?: string;
  };
}

/** Puts `question` to the box's /ask under `key`; null when the box cannot be reached. */
async function askBox(args: RelayArgs, question: string, key: string): Promise<AskAnswer | null> {
  try {
    const answer = await requestJson(args.socket, {
      method: "POST",
      path: "/ask",
      body: { question, key, waitMs: args.waitMs },
    });
    return { status: answer.status, body: answer.body as AskAnswer["body"] };
  } catch (error) {
    if (!(error instanceof SocketUnreachableError)) throw error;
    return null;
  }
}

/** The approval a pending answer names (or null), once `tool`'s wait is logged. */
function waitingOn(body: AskAnswer["body"], tool: string, log: RelayLog): number | null {
  const approval = typeof body.approval === "number" ? body.approval : null;
  const on = approval === null ? "" : ` on approval ${approval}`;
  log.send("notice", `${tool}: waiting for the box owner${on}`);
  return approval;
}

/**
 * Claude Code's permission prompt as an /ask: allow once the owner approves, deny with their reason
 * once refused, deny naming the approval while they have not answered. Its key counts answered
 * prompts for the same tool and input (as a call's does): asked again while pending, it joins the
 * same approval; once answered, the same use later asks the owner afresh.
 */
async function permission(
  args: RelayArgs,
  prompt: { keys: CallKeys; input: Record<string, unknown>; log: RelayLog },
): Promise<ToolResult> {
  const asked = readPermissionPrompt(prompt.input);
  if (typeof asked === "string") return text(denyAnswer(asked));
  const key = await prompt.keys.key("permission", { tool: asked.toolName, input: asked.input });
  const answer = await askBox(args, permissionQuestion(asked), key);
  if (answer === null) {
    return text(denyAnswer("The box could not be reached, so its owner could not be asked."));
  }
  const body = answer.body;
  if (answer.status === 200 && body.pending === true) {
    const approval = waitingOn(body, "box_permission", prompt.log);
    return text(denyAnswer(pendingMessage(asked, approval)));
  }
  prompt.keys.answered(key);
  prompt.log.send("info", `box_permission: answered (${answer.status})`);
  if (answer.status !== 200) {
    return text(denyAnswer(body.error ?? `The owner could not be asked (${answer.status}).`));
  }
  if (body.approved === true) return text(allowAnswer(asked));
  return text(denyAnswer(refusedMessage(asked, body.reason ?? null)));
}

/**
 * Droid's AskUser questionnaire as an /ask: yes once the owner approves, no (with their reason)
 * once refused, "call again" naming the approval while they have not answered. Its key counts
 * answered questionnaires as box_permission's does: asked again while pending, it joins the same
 * approval; once answered, the same questionnaire later asks the owner afresh.
 */
async function askUser(
  args: RelayArgs,
  asked: { keys: CallKeys; input: Record<string, unknown>; log: RelayLog },
): Promise<ToolResult> {
  const questionnaire = readQuestionnaire(asked.input);
  if (typeof questionnaire !== "string") {
    asked.log.send("warning", "box_ask_user: called without a questionnaire");
    return text(questionnaire.error);
  }
  const key = await asked.keys.key("ask_user", { questionnaire });
  const answer = await askBox(args, askUserQuestion(questionnaire), key);
  if (answer === null) {
    asked.log.send("error", "box_ask_user: the box could not be reached, so nothing was asked");
    return text("The box could not be reached, so its owner could not be asked.");
  }
  const body = answer.body;
  if (answer.status === 200 && body.pending === true) {
    return text(waitingMessage(waitingOn(body, "box_ask_user", asked.log)));
  }
  asked.keys.answered(key);
  asked.log.send("info", `box_ask_user: answered (${answer.status})`);
  if (answer.status !== 200) {
    return text(body.error ?? `The owner could not be asked (${answer.status}).`);
  }
  if (body.approved === true) return text(ANSWERED_YES);
  return text(answeredNo(typeof body.reason === "string" ? body.reason : null));
}

/**
 * An app's tool answers in MCP's own shape (its content blocks, structured content and isError,
 * with the vault's values already replaced by the broker): passed on as it is.
 */
function appResult(output: unknown): ToolResult | null {
  if (typeof output !== "object" || output === null) return null;
  const result = output as Record<string, unknown>;
  if (!Array.isArray(result.content)) return null;
  const blocks = result.content.filter((block): block is Record<string, unknown> =>
    typeof block === "object" && block !== null && typeof block.type === "string"
  );
  if (blocks.length !== result.content.length) return null;
  return {
    content: blocks,
    ...(typeof result.structuredContent === "object" && result.structuredContent !== null &&
        !Array.isArray(result.structuredContent)
      ? { structuredContent: result.structuredContent as Record<string, unknown> }
      : {}),
    ...(result.isError === true ? { isError: true } : {}),
  };
}

function text(content: string): ToolResult {
  return { content: [{ type: "text", text: content }] };
}

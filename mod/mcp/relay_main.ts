/**
 * `gurt mcp`, the relay role: an MCP server on stdio that offers the task's tools (`.` as `__`)
 * plus `box_ask`, and with `--permission-tool` `box_permission` (Claude Code's own permission
 * prompts, permission.ts; without it, that name is any tool the task lacks), and forwards every
 * call to the task socket. It holds no secrets. A pending answer and a denial come
 * back as plain text results, not errors, so the agent carries on.
 *
 * It answers initialize and tools/list within 150 ms of `gurt mcp` starting (some clients list
 * tools once, early, and miss a server that is slower): it loads no npm package, and reads the
 * task's tools from the socket while the client is still sending initialize.
 */
import denoJson from "../../deno.json" with { type: "json" };
import { postCall, requestJson, SocketUnreachableError } from "../net/mod.ts";
import {
  INVALID_PARAMS,
  LATEST_PROTOCOL_VERSION,
  type Method,
  RpcError,
  serveLines,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./json_rpc.ts";
import { askKey, CallKeys, toolName } from "./keys.ts";
import { ASK_TOOL, mcpTools, PERMISSION_TOOL, type ToolListing } from "./mcp_tools.ts";
import {
  allowAnswer,
  denyAnswer,
  pendingMessage,
  permissionQuestion,
  readPermissionPrompt,
  refusedMessage,
} from "./permission.ts";
import type { RelayArgs } from "./relay_args.ts";

/** What tools/call answers. */
interface ToolResult {
  content: { type: "text"; text: string }[];
  isError?: true;
}

/** Serves MCP on stdio until the client closes it. */
export default async function main(args: RelayArgs): Promise<number> {
  await serveLines(
    { input: Deno.stdin.readable, output: Deno.stdout.writable },
    relayMethods(args),
  );
  return 0;
}

/** The relay's methods; the task's tools are read at once, for the first tools/list. */
function relayMethods(args: RelayArgs): Record<string, Method> {
  const keys = new CallKeys();
  const prompts = new CallKeys();
  let early: Promise<ToolListing[]> | null = readTools(args.socket);
  early.catch(() => {}); // tools/list reads them again
  return {
    initialize: (params) => {
      const asked = params.protocolVersion;
      const version = typeof asked === "string" && SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
        ? asked
        : LATEST_PROTOCOL_VERSION;
      return {
        protocolVersion: version,
        capabilities: { tools: {} },
        serverInfo: { name: "gurt", version: denoJson.version },
      };
    },
    ping: () => ({}),
    "tools/list": async () => {
      const first = early;
      early = null;
      const listing = await (first ?? readTools(args.socket)).catch(() => readTools(args.socket));
      return { tools: mcpTools(listing, { permissionTool: args.permissionTool }) };
    },
    "tools/call": async (params) => {
      const { name, arguments: input = {} } = params;
      if (typeof name !== "string" || name === "") {
        throw new RpcError(INVALID_PARAMS, "Invalid params: tools/call needs the tool's name");
      }
      if (typeof input !== "object" || input === null || Array.isArray(input)) {
        throw new RpcError(INVALID_PARAMS, "Invalid params: a tool's arguments are an object");
      }
      if (name === PERMISSION_TOOL && args.permissionTool) {
        return await permission(args, { keys: prompts, input: input as Record<string, unknown> });
      }
      try {
        if (name === ASK_TOOL) return await ask(args, (input as { question?: unknown }).question);
        return await call(args, { keys, tool: toolName(name), input });
      } catch (error) {
        if (!(error instanceof SocketUnreachableError)) throw error;
        return {
          content: [{ type: "text", text: `The box could not be reached.` }],
          isError: true,
        };
      }
    },
  };
}

async function readTools(socket: string): Promise<ToolListing[]> {
  const answer = await requestJson(socket, { method: "GET", path: "/tools" });
  if (answer.status !== 200) {
    throw new Error(`the task's tools could not be read (the core answered ${answer.status})`);
  }
  return answer.body as ToolListing[];
}

async function call(
  args: RelayArgs,
  call: { keys: CallKeys; tool: string; input: unknown },
): Promise<ToolResult> {
  const key = await call.keys.key(call.tool, call.input);
  const { body } = await postCall(args.socket, {
    tool: call.tool,
    input: call.input,
    key,
    waitMs: args.waitMs,
  });
  if (body.ok) {
    call.keys.answered(key);
    return text(JSON.stringify(body.output ?? null));
  }
  // A pending answer keeps the key, so calling again joins the same approval.
  if (!("pending" in body)) call.keys.answered(key);
  return text(body.error);
}

async function ask(args: RelayArgs, question: unknown): Promise<ToolResult> {
  if (typeof question !== "string" || question === "") {
    return text("box_ask needs a question.");
  }
  const answer = await requestJson(args.socket, {
    method: "POST",
    path: "/ask",
    body: { question, key: await askKey(question), waitMs: args.waitMs },
  });
  const body = answer.body as { approved?: boolean; pending?: boolean; error?: string };
  if (body.pending === true) {
    return text("The box owner has not answered yet. Ask again with the same question to wait.");
  }
  if (answer.status !== 200) return text(body.error ?? `the question failed (${answer.status})`);
  return text(body.approved === true ? "The owner said yes." : "The owner said no.");
}

/**
 * Claude Code's permission prompt as an /ask: allow once the owner approves, deny with their reason
 * once refused, deny naming the approval while they have not answered. Its key counts answered
 * prompts for the same tool and input (as a call's does): asked again while pending, it joins the
 * same approval; once answered, the same use later asks the owner afresh.
 */
async function permission(
  args: RelayArgs,
  prompt: { keys: CallKeys; input: Record<string, unknown> },
): Promise<ToolResult> {
  const asked = readPermissionPrompt(prompt.input);
  if (typeof asked === "string") return text(denyAnswer(asked));
  const key = await prompt.keys.key("permission", { tool: asked.toolName, input: asked.input });
  let answer: { status: number; body: unknown };
  try {
    answer = await requestJson(args.socket, {
      method: "POST",
      path: "/ask",
      body: { question: permissionQuestion(asked), key, waitMs: args.waitMs },
    });
  } catch (error) {
    if (!(error instanceof SocketUnreachableError)) throw error;
    return text(denyAnswer("The box could not be reached, so its owner could not be asked."));
  }
  const body = answer.body as {
    approved?: boolean;
    reason?: string;
    pending?: boolean;
    approval?: number;
    error?: string;
  };
  if (answer.status === 200 && body.pending === true) {
    const approval = typeof body.approval === "number" ? body.approval : null;
    return text(denyAnswer(pendingMessage(asked, approval)));
  }
  prompt.keys.answered(key);
  if (answer.status !== 200) {
    return text(denyAnswer(body.error ?? `The owner could not be asked (${answer.status}).`));
  }
  if (body.approved === true) return text(allowAnswer(asked));
  return text(denyAnswer(refusedMessage(asked, body.reason ?? null)));
}

function text(content: string): ToolResult {
  return { content: [{ type: "text", text: content }] };
}

/**
 * `gurt mcp`, the relay role: an MCP server on stdio that offers the task's tools (`.` as `__`)
 * plus `box_ask`, and forwards every call to the task socket. It holds no secrets. A pending
 * answer and a denial come back as plain text results, not errors, so the agent carries on.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import process from "node:process";
import denoJson from "../../deno.json" with { type: "json" };
import { postCall, requestJson } from "../net/mod.ts";
import { askKey, CallKeys, mcpName, toolName } from "./keys.ts";

/** What the relay role is given. */
export interface RelayArgs {
  socket: string;
}

const ASK_TOOL = "box_ask";

/** Serves MCP on stdio until the client closes it. */
export default async function main(args: RelayArgs): Promise<number> {
  const keys = new CallKeys();
  const server = new Server({ name: "gurt", version: denoJson.version }, {
    capabilities: { tools: {} },
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const answer = await requestJson(args.socket, { method: "GET", path: "/tools" });
    if (answer.status !== 200) throw new Error(`the task's tools could not be read`);
    const tools = (answer.body as { name: string; description: string; input: unknown }[]).map(
      (tool) => ({
        name: mcpName(tool.name),
        description: tool.description,
        inputSchema: tool.input as { type: "object" },
      }),
    );
    tools.push({
      name: ASK_TOOL,
      description: "Asks the box owner a question and waits for a yes or no.",
      inputSchema: {
        type: "object",
        properties: { question: { type: "string" } },
        required: ["question"],
      } as { type: "object" },
    });
    return { tools };
  });
  server.setRequestHandler(CallToolRequestSchema, async (
    request: { params: { name: string; arguments?: Record<string, unknown> } },
  ): Promise<CallToolResult> => {
    const input = request.params.arguments ?? {};
    if (request.params.name === ASK_TOOL) return await ask(args.socket, input.question);
    const tool = toolName(request.params.name);
    const key = keys.key(tool, input);
    const { body } = await postCall(args.socket, { tool, input, key });
    if ("pending" in body) return text(body.error);
    keys.answered(key);
    if (body.ok) return text(JSON.stringify(body.output ?? null));
    return text(body.error);
  });
  const closed = Promise.withResolvers<void>();
  server.onclose = () => closed.resolve();
  // The client closing our stdin is the end of the session.
  process.stdin.on("end", () => closed.resolve());
  await server.connect(new StdioServerTransport());
  await closed.promise;
  return 0;
}

async function ask(socket: string, question: unknown): Promise<CallToolResult> {
  if (typeof question !== "string" || question === "") {
    return text("box_ask needs a question.");
  }
  const answer = await requestJson(socket, {
    method: "POST",
    path: "/ask",
    body: { question, key: askKey(question) },
  });
  const body = answer.body as { approved?: boolean; pending?: boolean; error?: string };
  if (body.pending === true) {
    return text("The box owner has not answered yet. Ask again with the same question to wait.");
  }
  if (answer.status !== 200) return text(body.error ?? `the question failed (${answer.status})`);
  return text(body.approved === true ? "The owner said yes." : "The owner said no.");
}

function text(content: string): CallToolResult {
  return { content: [{ type: "text", text: content }] };
}

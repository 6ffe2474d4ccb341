/**
 * The loop's core tools: `clock`, `find_tool` and `call_tool`. The time is not authority and needs
 * no broker; find_tool searches the task's tools from GET /tools; call_tool sends POST /call with a
 * stable key. A denial is a result with its text, so the turn goes on.
 */
import { postCall, requestJson } from "../net/mod.ts";
import type { OfferedTool } from "./conversation.ts";

/** The most characters of one tool result given to the model. */
export const MAX_RESULT_CHARS = 16_000;

/** The least time between two asks of a call that is pending. */
const PENDING_PAUSE_MS = 1000;

/** The three tools the model is offered. */
export const CORE_TOOLS: OfferedTool[] = [
  {
    name: "clock",
    description: "Returns the current date and time (UTC, ISO 8601).",
    input: { type: "object", properties: {}, additionalProperties: false },
  },
  {
    name: "find_tool",
    description:
      "Searches the tools this task may call. Give words from what you want to do; an empty query lists them all. Returns each tool's name, description and input schema.",
    input: {
      type: "object",
      properties: { query: { type: "string" } },
      required: ["query"],
      additionalProperties: false,
    },
  },
  {
    name: "call_tool",
    description:
      "Calls one of this task's tools by name with its input. The owner's grants decide; a denial comes back as text that says why.",
    input: {
      type: "object",
      properties: { name: { type: "string" }, input: { type: "object" } },
      required: ["name", "input"],
      additionalProperties: false,
    },
  },
];

/** What a tool call did, for the model and for the step log. */
export interface ToolOutcome {
  content: string;
}

/** Runs one core tool. `key` is the call's stable key. */
export async function runCoreTool(
  socket: string,
  call: { name: string; input: unknown; key: string },
): Promise<ToolOutcome> {
  const input = (typeof call.input === "object" && call.input !== null ? call.input : {}) as Record<
    string,
    unknown
  >;
  if (call.name === "clock") return { content: new Date().toISOString() };
  if (call.name === "find_tool") {
    return { content: await findTool(socket, String(input.query ?? "")) };
  }
  if (call.name === "call_tool") {
    if (typeof input.name !== "string" || input.name === "") {
      return { content: "call_tool needs the name of a tool; use find_tool to find one." };
    }
    return { content: await callTool(socket, input.name, input.input ?? {}, call.key) };
  }
  return {
    content: `There is no tool ${call.name}. The tools are clock, find_tool and call_tool.`,
  };
}

async function findTool(socket: string, query: string): Promise<string> {
  const answer = await requestJson(socket, { method: "GET", path: "/tools" });
  if (answer.status !== 200) return `The tool list could not be read (status ${answer.status}).`;
  const tools = answer.body as { name: string; description: string; input: unknown }[];
  const words = query.toLowerCase().split(/[^a-z0-9_]+/).filter((w) => w !== "");
  const found = tools.filter((tool) => {
    const text = `${tool.name} ${tool.description}`.toLowerCase().replaceAll(".", " ");
    return words.length === 0 || words.some((word) => text.includes(word));
  });
  return clip(JSON.stringify(found.length > 0 ? found : tools));
}

async function callTool(
  socket: string,
  tool: string,
  input: unknown,
  key: string,
): Promise<string> {
  for (;;) {
    const sent = Date.now();
    const { status, body } = await postCall(socket, { tool, input, key });
    if ("pending" in body) {
      // Still waiting on the owner: ask again with the same key. A pending answer that came back
      // at once (the core is closing) is not asked again at once.
      const early = PENDING_PAUSE_MS - (Date.now() - sent);
      if (early > 0) await new Promise((resolve) => setTimeout(resolve, early));
      continue;
    }
    if (body.ok) return clip(JSON.stringify(body.output ?? null));
    if (status !== 200) return `The call failed: ${body.error}`;
    return clip(body.error);
  }
}

function clip(text: string): string {
  return text.length <= MAX_RESULT_CHARS
    ? text
    : `${text.slice(0, MAX_RESULT_CHARS)}… (cut at ${MAX_RESULT_CHARS} characters)`;
}

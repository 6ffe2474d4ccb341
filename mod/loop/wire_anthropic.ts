/** Anthropic's Messages API: the request for a conversation, and the streamed reply read back. */
import type { Message, OfferedTool, Reply, ToolCall } from "./conversation.ts";
import { sseData } from "../net/mod.ts";

type Fields = Record<string, unknown>;

/** The request body, for the task's model endpoint (which puts the vault's key on it). */
export function anthropicRequest(
  messages: Message[],
  options: { model: string; system: string; tools: OfferedTool[]; maxTokens: number },
): Fields {
  return {
    model: options.model,
    max_tokens: options.maxTokens,
    system: options.system,
    stream: true,
    tools: options.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.input,
    })),
    messages: messages.map(toWire),
  };
}

function toWire(message: Message): Fields {
  if (message.role === "user") return { role: "user", content: message.text };
  if (message.role === "assistant") {
    const content: Fields[] = [];
    if (message.text !== "") content.push({ type: "text", text: message.text });
    for (const call of message.calls) {
      content.push({ type: "tool_use", id: call.id, name: call.name, input: call.input ?? {} });
    }
    if (content.length === 0) content.push({ type: "text", text: "(nothing)" });
    return { role: "assistant", content };
  }
  return {
    role: "user",
    content: message.results.map((r) => ({
      type: "tool_result",
      tool_use_id: r.id,
      content: r.content,
    })),
  };
}

/** Reads a streamed reply (or a whole one, when the service did not stream). */
export async function anthropicReply(response: Response): Promise<Reply> {
  const type = response.headers.get("content-type") ?? "";
  if (!type.includes("text/event-stream") || response.body === null) {
    return wholeReply(await response.json());
  }
  const blocks: { type: string; text: string; id: string; name: string; json: string }[] = [];
  for await (const data of sseData(response.body)) {
    let event: Fields;
    try {
      event = JSON.parse(data);
    } catch {
      continue;
    }
    const index = typeof event.index === "number" ? event.index : 0;
    if (event.type === "content_block_start") {
      const block = (event.content_block ?? {}) as Fields;
      blocks[index] = {
        type: String(block.type),
        text: typeof block.text === "string" ? block.text : "",
        id: String(block.id ?? ""),
        name: String(block.name ?? ""),
        json: "",
      };
    } else if (event.type === "content_block_delta" && blocks[index] !== undefined) {
      const delta = (event.delta ?? {}) as Fields;
      if (delta.type === "text_delta") blocks[index].text += String(delta.text ?? "");
      if (delta.type === "input_json_delta") blocks[index].json += String(delta.partial_json ?? "");
    } else if (event.type === "error") {
      throw new Error(`the model service reported an error: ${JSON.stringify(event.error)}`);
    }
  }
  const calls: ToolCall[] = [];
  let text = "";
  for (const block of blocks) {
    if (block === undefined) continue;
    if (block.type === "text") text += block.text;
    if (block.type === "tool_use") {
      calls.push({ id: block.id, name: block.name, input: parseInput(block.json) });
    }
  }
  return { text, calls };
}

function wholeReply(answer: Fields): Reply {
  const calls: ToolCall[] = [];
  let text = "";
  for (const block of (answer.content ?? []) as Fields[]) {
    if (block.type === "text") text += String(block.text ?? "");
    if (block.type === "tool_use") {
      calls.push({ id: String(block.id), name: String(block.name), input: block.input ?? {} });
    }
  }
  return { text, calls };
}

function parseInput(json: string): unknown {
  if (json.trim() === "") return {};
  try {
    return JSON.parse(json);
  } catch {
    return { unparsed: json };
  }
}

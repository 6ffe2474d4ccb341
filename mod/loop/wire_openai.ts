/**
 * OpenAI's Chat Completions, which OpenAI-compatible servers (llama.cpp's server, vLLM, Ollama) speak
 * too: the request for a conversation, and the streamed reply read back.
 */
import type { Message, OfferedTool, Reply, ToolCall } from "./conversation.ts";
import { sseData } from "../net/mod.ts";

type Fields = Record<string, unknown>;

/** The request body, for the task's model endpoint (which puts the vault's key on it). */
export function openaiRequest(
  messages: Message[],
  options: { model: string; system: string; tools: OfferedTool[]; maxTokens: number },
): Fields {
  const wire: Fields[] = [{ role: "system", content: options.system }];
  for (const message of messages) wire.push(...toWire(message));
  return {
    model: options.model,
    // OpenAI's gpt-5 and o-series models refuse max_tokens; vLLM and llama.cpp take this one too.
    max_completion_tokens: options.maxTokens,
    stream: true,
    // Chat Completions reports a stream's usage only when asked, and every answer is metered.
    stream_options: { include_usage: true },
    tools: options.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.input },
    })),
    messages: wire,
  };
}

function toWire(message: Message): Fields[] {
  if (message.role === "user") return [{ role: "user", content: message.text }];
  if (message.role === "assistant") {
    const out: Fields = { role: "assistant", content: message.text === "" ? null : message.text };
    if (message.calls.length > 0) {
      out.tool_calls = message.calls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: JSON.stringify(call.input ?? {}) },
      }));
    }
    return [out];
  }
  return message.results.map((r) => ({ role: "tool", tool_call_id: r.id, content: r.content }));
}

/** Reads a streamed reply (or a whole one, when the service did not stream). */
export async function openaiReply(response: Response): Promise<Reply> {
  const type = response.headers.get("content-type") ?? "";
  if (!type.includes("text/event-stream") || response.body === null) {
    const answer = await response.json() as Fields;
    const message = (((answer.choices ?? []) as Fields[])[0]?.message ?? {}) as Fields;
    const calls = ((message.tool_calls ?? []) as Fields[]).map((call, i) => {
      const fn = (call.function ?? {}) as Fields;
      return toCall(String(call.id ?? `call_${i}`), String(fn.name), String(fn.arguments ?? ""));
    });
    return { text: typeof message.content === "string" ? message.content : "", calls };
  }
  let text = "";
  const partial: { id: string; name: string; args: string }[] = [];
  for await (const data of sseData(response.body)) {
    if (data.trim() === "[DONE]") break;
    let chunk: Fields;
    try {
      chunk = JSON.parse(data);
    } catch {
      continue;
    }
    if (chunk.error !== undefined) {
      throw new Error(`the model service reported an error: ${JSON.stringify(chunk.error)}`);
    }
    const delta = (((chunk.choices ?? []) as Fields[])[0]?.delta ?? {}) as Fields;
    if (typeof delta.content === "string") text += delta.content;
    for (const call of (delta.tool_calls ?? []) as Fields[]) {
      const index = typeof call.index === "number" ? call.index : partial.length;
      partial[index] ??= { id: "", name: "", args: "" };
      const fn = (call.function ?? {}) as Fields;
      if (typeof call.id === "string") partial[index].id = call.id;
      if (typeof fn.name === "string") partial[index].name += fn.name;
      if (typeof fn.arguments === "string") partial[index].args += fn.arguments;
    }
  }
  const calls = partial.filter((p) => p !== undefined).map((p, i) =>
    toCall(p.id === "" ? `call_${i}` : p.id, p.name, p.args)
  );
  return { text, calls };
}

function toCall(id: string, name: string, args: string): ToolCall {
  let input: unknown = {};
  if (args.trim() !== "") {
    try {
      input = JSON.parse(args);
    } catch {
      input = { unparsed: args };
    }
  }
  return { id, name, input };
}

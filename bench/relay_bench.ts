/**
 * The model endpoint's cost per streamed answer: an ordinary Anthropic answer (thinking, text and a
 * tool call's input, in deltas of about 20 characters, sent in 4 KiB chunks) and an OpenAI one
 * (text and a tool call's arguments), through the endpoint's event redactor with 10 vault keys, against
 * the least any relay that reads the events must do, JSON.parse of each event's data, in the same
 * run. Figures in MB of answer per second.
 */
import { EventRedactor } from "../mod/model-proxy/stream_redaction.ts";
import { AnthropicAnswer } from "../mod/model-proxy/messages_stream.ts";
import { OpenAIAnswer } from "../mod/model-proxy/chat_stream.ts";
import { answerRedaction, Redactor } from "../mod/vault/mod.ts";
import { type BenchRow, printTable } from "./table.ts";
import { rate } from "./measure.ts";

const redaction = answerRedaction(
  Redactor.forValues(Array.from({ length: 10 }, (_, i) => `sk-live-${i}-${crypto.randomUUID()}`)),
);

function sse(event: string | null, data: unknown): string {
  return `${event === null ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;
}

/** Words of about 20 characters, some ending in what could start a vault value. */
function pieces(count: number): string[] {
  return Array.from(
    { length: count },
    (_, i) => `word ${i} and more ${i % 7 === 0 ? "sk-li" : ""}`,
  );
}

function anthropicAnswer(): string {
  const delta = (index: number, body: unknown) =>
    sse("content_block_delta", { type: "content_block_delta", index, delta: body });
  const block = (index: number, content: unknown) =>
    sse("content_block_start", { type: "content_block_start", index, content_block: content });
  const stop = (index: number) => sse("content_block_stop", { type: "content_block_stop", index });
  const json = JSON.stringify({ command: pieces(400).join(" "), cwd: "/tmp" });
  const parts = json.match(/.{1,20}/gs)!;
  return [
    sse("message_start", {
      type: "message_start",
      message: { id: "msg_1", role: "assistant", content: [], usage: { input_tokens: 10 } },
    }),
    block(0, { type: "thinking", thinking: "", signature: "" }),
    ...pieces(500).map((thinking) => delta(0, { type: "thinking_delta", thinking })),
    stop(0),
    block(1, { type: "text", text: "" }),
    ...pieces(2000).map((text) => delta(1, { type: "text_delta", text })),
    stop(1),
    block(2, { type: "tool_use", id: "toolu_1", name: "shell", input: {} }),
    ...parts.map((partial_json) => delta(2, { type: "input_json_delta", partial_json })),
    stop(2),
    sse("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" } }),
    sse("message_stop", { type: "message_stop" }),
  ].join("");
}

function openaiAnswer(): string {
  const chunk = (delta: unknown) =>
    sse(null, {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason: null }],
    });
  const json = JSON.stringify({ command: pieces(400).join(" "), cwd: "/tmp" });
  return [
    ...pieces(2500).map((content) => chunk({ content })),
    chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "shell", arguments: "" } }] }),
    ...json.match(/.{1,20}/gs)!.map((part) =>
      chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] })
    ),
    sse(null, "[DONE]").replace('"[DONE]"', "[DONE]"),
  ].join("");
}

function chunks(text: string): string[] {
  return text.match(/[^]{1,4096}/g)!;
}

function datas(text: string): string[] {
  return text.split("\n\n").filter((e) => e !== "").map((e) =>
    e.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n")
  );
}

const rows: BenchRow[] = [];
for (const [kind, text] of [["Anthropic", anthropicAnswer()], ["OpenAI", openaiAnswer()]]) {
  const sent = chunks(text);
  const events = datas(text);
  const mb = new TextEncoder().encode(text).length / 1e6;
  const relayed = await rate(() => {
    const format = kind === "Anthropic"
      ? new AnthropicAnswer(redaction)
      : new OpenAIAnswer(redaction, 1);
    const redactor = new EventRedactor(format, redaction);
    let out = 0;
    for (const chunk of sent) out += redactor.push(chunk).length;
    out += redactor.end().length;
    if (out !== text.length) throw new Error(`the ${kind} answer was not passed on whole`);
  }, { batch: 1 });
  const parsed = await rate(() => {
    for (const data of events) if (data !== "[DONE]") JSON.parse(data);
  }, { batch: 1 });
  rows.push({
    what: `relay, ${kind} answer (${mb.toFixed(2)} MB, ${events.length} events)`,
    unit: "MB/s",
    value: relayed * mb,
    baselineWhat: "JSON.parse of each event",
    baseline: parsed * mb,
    target: ">= 0.05",
  });
}
printTable(rows);

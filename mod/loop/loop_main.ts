/**
 * `gurt loop`, the worker role's turn loop (README.md#agents): resumes its conversation from GET
 * /task, asks the model through the core's relay (POST /model), runs the core tools, and logs every
 * message it adds with /step before acting on it, so a restart repeats no tool call.
 */
import { requestJson, requestStream } from "../net/mod.ts";
import {
  callKey,
  type LoopStepData,
  type Message,
  type Reply,
  resume,
  turnsIn,
  unansweredCalls,
} from "./conversation.ts";
import { CORE_TOOLS, runCoreTool } from "./core_tools.ts";
import { anthropicReply, anthropicRequest } from "./wire_anthropic.ts";
import { openaiReply, openaiRequest } from "./wire_openai.ts";

/** What the worker role is given. */
export interface LoopArgs {
  socket: string;
  task: string;
}

interface ModelInfo {
  kind: "anthropic" | "openai";
  model: string;
  maxTokens: number;
  maxTurns: number;
}

const SYSTEM = [
  "You are the agent of a gurt task, working on the owner's machine.",
  "You reach the machine only through tools: find_tool lists the task's tools, call_tool calls one.",
  "The owner's grants decide every call. When a call is denied, say so plainly and carry on",
  "without it; never try to get around a denial.",
].join(" ");

const RETRIES = 3;

/** Runs the task's conversation to its end; 0 when the model finished. */
export default async function main(args: LoopArgs): Promise<number> {
  const info = await modelInfo(args.socket);
  const start = await requestJson(args.socket, { method: "GET", path: "/task" });
  const { task, steps } = start.body as { task: { prompt: string }; steps: { data: unknown }[] };
  const messages = resume(task.prompt, steps);
  for (;;) {
    const unanswered = unansweredCalls(messages);
    if (unanswered.length > 0) {
      await runCalls(args.socket, messages, unanswered);
      continue;
    }
    const last = messages[messages.length - 1];
    if (last.role === "assistant") return 0;
    if (turnsIn(messages) >= info.maxTurns) {
      await step(
        args.socket,
        `stopped after ${info.maxTurns} model turns ([models] max_turns)`,
        null,
      );
      return 1;
    }
    const reply = await ask(args.socket, info, messages);
    const message: Message = { role: "assistant", text: reply.text, calls: reply.calls };
    messages.push(message);
    await step(args.socket, reply.text, { loop: { messages: [message] } });
  }
}

/** Runs the turn's unanswered calls, logging each result as its own step before the next. */
async function runCalls(socket: string, messages: Message[], calls: Reply["calls"]): Promise<void> {
  const turn = turnsIn(messages);
  let assistant = messages.length - 1;
  while (messages[assistant].role !== "assistant") assistant--;
  const all = (messages[assistant] as Extract<Message, { role: "assistant" }>).calls;
  for (const call of calls) {
    const outcome = await runCoreTool(socket, { ...call, key: callKey(turn, all.indexOf(call)) });
    const result = { id: call.id, content: outcome.content };
    const last = messages[messages.length - 1];
    if (last.role === "tool") last.results.push(result);
    else messages.push({ role: "tool", results: [result] });
    await step(socket, "", { loop: { messages: [{ role: "tool", results: [result] }] } });
  }
}

async function modelInfo(socket: string): Promise<ModelInfo> {
  const answer = await requestJson(socket, { method: "GET", path: "/model" });
  if (answer.status !== 200) throw new Error(`GET /model answered ${JSON.stringify(answer.body)}`);
  return answer.body as ModelInfo;
}

async function ask(socket: string, info: ModelInfo, messages: Message[]): Promise<Reply> {
  const options = { system: SYSTEM, tools: CORE_TOOLS, maxTokens: info.maxTokens };
  const body = info.kind === "anthropic"
    ? anthropicRequest(messages, options)
    : openaiRequest(messages, options);
  let problem = "";
  for (let attempt = 1; attempt <= RETRIES; attempt++) {
    const response = await requestStream(socket, { method: "POST", path: "/model", body });
    if (response.status === 200) {
      return info.kind === "anthropic"
        ? await anthropicReply(response)
        : await openaiReply(response);
    }
    const text = await response.text();
    let error: { error?: string; code?: string } = {};
    try {
      error = JSON.parse(text);
    } catch {
      error = { error: text.slice(0, 500) };
    }
    problem = error.error ?? `status ${response.status}`;
    // No key, or a request the core refuses: asking again changes nothing.
    if (response.status === 503 && error.code === "no_model_key") break;
    if (response.status === 400 || response.status === 403 || response.status === 413) break;
    await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
  }
  const message =
    `gurt loop: the model request failed: ${problem}; see runbook.md#model-unreachable`;
  // Said in the task's journal too, so the owner's view shows why the task failed.
  await step(socket, message, null).catch(() => {});
  throw new Error(message);
}

async function step(socket: string, text: string, data: LoopStepData | null): Promise<void> {
  const answer = await requestJson(socket, { method: "POST", path: "/step", body: { text, data } });
  if (answer.status !== 200) {
    throw new Error(`the step could not be logged: ${JSON.stringify(answer.body)}`);
  }
}

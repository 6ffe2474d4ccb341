/**
 * `gurt loop`, the worker role's turn loop (README.md#agents): resumes its conversation from GET
 * /task, asks the model through its task's model endpoint (ANTHROPIC_BASE_URL or OPENAI_BASE_URL,
 * which puts the vault's key on the request), runs the core tools, and logs every message it adds
 * with /step before acting on it, so a restart repeats no tool call.
 */
import { requestJson } from "../net/mod.ts";
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
import { type ModelEndpoints, modelRequestTarget, modelService } from "./model_service.ts";
import { anthropicReply, anthropicRequest } from "./wire_anthropic.ts";
import { openaiReply, openaiRequest } from "./wire_openai.ts";

/** What the worker role is given. */
export interface LoopArgs {
  socket: string;
  task: string;
  /** The task's model endpoint, from its environment (endpointsFromEnv). */
  endpoints: ModelEndpoints;
}

/** GET /model: the task's model, and the loop's limits ([models] max_tokens and max_turns). */
interface ModelInfo {
  model: string;
  maxTokens: number;
  maxTurns: number;
  /** The API of the owner's provider that serves `model` (absent or null: a built-in service's). */
  provider?: { model: string; api: string } | null;
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
    const reply = await ask(args, info, messages);
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

async function ask(args: LoopArgs, info: ModelInfo, messages: Message[]): Promise<Reply> {
  // A model the owner's provider serves is spoken in its API: Anthropic's, else Chat Completions.
  const provided = info.provider?.model === info.model ? info.provider.api : null;
  const service = provided === null
    ? modelService(info.model)
    : provided === "anthropic"
    ? "anthropic"
    : "openai";
  const options = {
    model: info.model,
    system: SYSTEM,
    tools: CORE_TOOLS,
    maxTokens: info.maxTokens,
  };
  const body = JSON.stringify(
    service === "anthropic"
      ? anthropicRequest(messages, options)
      : openaiRequest(messages, options),
  );
  const target = modelRequestTarget(service, args.endpoints);
  let problem = "";
  for (let attempt = 1; attempt <= RETRIES; attempt++) {
    let response: Response;
    try {
      response = await fetch(target.url, { method: "POST", headers: target.headers, body });
    } catch (error) {
      problem = `the task's model endpoint at ${target.url} cannot be reached (${describe(error)})`;
      await pause(attempt);
      continue;
    }
    if (response.status === 200) {
      return service === "anthropic" ? await anthropicReply(response) : await openaiReply(response);
    }
    problem = errorText(await response.text(), response.status);
    // No key in the vault (401), or a request the endpoint or the service refuses: asking again
    // changes nothing.
    if ([400, 401, 403, 404, 413].includes(response.status)) break;
    await pause(attempt);
  }
  // The endpoint's own sentences (no key, a refusal) end with their runbook entry.
  const message = /see runbook\.md#[a-z0-9-]+\.?$/.test(problem)
    ? `gurt loop: the model request failed: ${problem}`
    : `gurt loop: the model request failed: ${problem}; see runbook.md#model-unreachable`;
  // Said in the task's journal too, so the owner's view shows why the task failed.
  await step(args.socket, message, null).catch(() => {});
  throw new Error(message);
}

/**
 * The message of an error answer: Anthropic's `{"type":"error","error":{"message"}}` and OpenAI's
 * `{"error":{"message"}}` alike, else the start of its text.
 */
function errorText(text: string, status: number): string {
  try {
    const error = (JSON.parse(text) as { error?: { message?: unknown } }).error;
    if (typeof error?.message === "string") return error.message;
  } catch {
    // not JSON: its text says what it is
  }
  return text.trim() === "" ? `status ${status}` : `status ${status}: ${text.slice(0, 500)}`;
}

function pause(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 500 * attempt));
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function step(socket: string, text: string, data: LoopStepData | null): Promise<void> {
  const answer = await requestJson(socket, { method: "POST", path: "/step", body: { text, data } });
  if (answer.status !== 200) {
    throw new Error(`the step could not be logged: ${JSON.stringify(answer.body)}`);
  }
}

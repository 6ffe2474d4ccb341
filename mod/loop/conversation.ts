/**
 * The loop's conversation in a form of its own, independent of the wire format, and how it is
 * rebuilt from the task's steps after a restart: each step's `data.loop.messages` holds the
 * messages that step added.
 */

/** One tool call the model asked for. */
export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
}

/** One message of the conversation. */
export type Message =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; calls: ToolCall[] }
  | { role: "tool"; results: { id: string; content: string }[] };

/** What the model answered in one request. */
export interface Reply {
  text: string;
  calls: ToolCall[];
}

/** A tool offered to the model. */
export interface OfferedTool {
  name: string;
  description: string;
  input: Record<string, unknown>;
}

/** The step data of a loop step. */
export interface LoopStepData {
  loop: { messages: Message[] };
}

/** The conversation so far: the task's prompt, then every message the loop's steps recorded. */
export function resume(prompt: string, steps: { data: unknown }[]): Message[] {
  const messages: Message[] = [{ role: "user", text: prompt === "" ? "(no prompt)" : prompt }];
  for (const step of steps) {
    const loop = (step.data as Partial<LoopStepData> | null)?.loop;
    if (loop === undefined || !Array.isArray(loop.messages)) continue;
    for (const message of loop.messages) {
      const last = messages[messages.length - 1];
      // Each tool result is its own step; the results of one turn form one message.
      if (message.role === "tool" && last.role === "tool") {
        messages[messages.length - 1] = {
          role: "tool",
          results: [...last.results, ...message.results],
        };
      } else {
        messages.push(message);
      }
    }
  }
  return messages;
}

/** The calls of the last turn that have no result yet (after a restart, those still to run). */
export function unansweredCalls(messages: Message[]): ToolCall[] {
  let turn = messages.length - 1;
  while (turn >= 0 && messages[turn].role !== "assistant") turn--;
  if (turn < 0) return [];
  const assistant = messages[turn] as Extract<Message, { role: "assistant" }>;
  const answered = new Set<string>();
  for (const message of messages.slice(turn + 1)) {
    if (message.role === "tool") { for (const result of message.results) answered.add(result.id); }
  }
  return assistant.calls.filter((call) => !answered.has(call.id));
}

/** The number of assistant messages, which numbers the turns (and so the tool call keys). */
export function turnsIn(messages: Message[]): number {
  return messages.filter((m) => m.role === "assistant").length;
}

/** The key of call `index` of turn `turn`: the same after a restart, never shared by two calls. */
export function callKey(turn: number, index: number): string {
  return `loop.${turn}.${index}`;
}

/** POST /call on a task socket (docs/broker-api.md), as a worker or the MCP relay sends it. */
import { requestJson } from "./unix_http.ts";

/**
 * What /call answers (docs/broker-api.md): the tool's output, the call's error, or, while the call
 * waits on the box owner, pending with a sentence to show. The broker answers with this type.
 */
export type CallResponse =
  | { ok: true; output: unknown }
  | { ok: false; error: string }
  | { ok: false; pending: true; error: string };

/**
 * Sends one tool call with its key (and, if given, the longest it waits on the owner) over the task
 * socket: the HTTP status and the answer. An answer of another status than 200 (a body refused, a
 * key used for another call) is the call's error.
 * The same key gets the same result, so the call may go on a kept connection and be sent again.
 */
export async function postCall(
  socket: string,
  call: { tool: string; input: unknown; key: string; waitMs?: number },
): Promise<{ status: number; body: CallResponse }> {
  const answer = await requestJson(socket, {
    method: "POST",
    path: "/call",
    body: call,
    repeatable: true,
  });
  if (answer.status === 200) return { status: 200, body: answer.body as CallResponse };
  const error = (answer.body as { error?: unknown } | null)?.error;
  return {
    status: answer.status,
    body: {
      ok: false,
      error: typeof error === "string" ? error : `the core answered ${answer.status}`,
    },
  };
}

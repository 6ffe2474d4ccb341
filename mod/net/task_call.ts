/** POST /call on a task socket (seed 000), as a worker or the MCP relay sends it. */
import { requestJson } from "./unix_http.ts";

/** What /call answers: `{ok, output}`, `{ok: false, error}`, or pending with a sentence. */
export interface CallReply {
  ok?: boolean;
  pending?: boolean;
  output?: unknown;
  error?: string;
}

/**
 * Sends one tool call with its key over the task socket: the HTTP status and the answer. The same
 * key gets the same result, so the call may go on a kept connection and be sent again.
 */
export async function postCall(
  socket: string,
  call: { tool: string; input: unknown; key: string },
): Promise<{ status: number; body: CallReply }> {
  const answer = await requestJson(socket, {
    method: "POST",
    path: "/call",
    body: call,
    repeatable: true,
  });
  return { status: answer.status, body: answer.body as CallReply };
}

/** A task's model endpoint as a client inside the task reaches it, for tests through a real core. */
import type { Json, TestTask } from "../kit/mod.ts";

/** The task's model endpoint socket, which the task init opens on the task's loopback. */
export function endpointOf(task: TestTask): string {
  return task.socket.replace(/broker\.sock$/, "model.sock");
}

/** One Anthropic Messages request to the task's endpoint, with the placeholder key. */
export async function postModel(
  task: TestTask,
  body: unknown,
): Promise<{ status: number; body: Json }> {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: endpointOf(task) } });
  try {
    const response = await fetch("http://127.0.0.1/v1/messages", {
      method: "POST",
      client,
      headers: {
        "content-type": "application/json",
        "x-api-key": "gurt-placeholder-key",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) };
  } finally {
    client.close();
  }
}

/** A task's model endpoint as a client inside the task reaches it, for tests through a real core. */
import { realFileOps } from "../../mod/audit/mod.ts";
import { type Json, startBox, type TestBox, type TestTask } from "../kit/mod.ts";

/** The task's model endpoint socket, which the task init opens on the task's loopback. */
export function endpointOf(task: TestTask): string {
  return task.socket.replace(/broker\.sock$/, "model.sock");
}

/**
 * One Anthropic Messages request to the endpoint on `socket`, with the placeholder key: the answer
 * as it comes, and its client, to close once the answer is read.
 */
export async function sendModel(
  socket: string,
  body: unknown,
): Promise<{ response: Response; client: Deno.HttpClient }> {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
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
    return { response, client };
  } catch (error) {
    client.close();
    throw error;
  }
}

/** One Anthropic Messages request to the task's endpoint, with the placeholder key. */
export async function postModel(
  task: TestTask,
  body: unknown,
): Promise<{ status: number; body: Json }> {
  const { response, client } = await sendModel(endpointOf(task), body);
  try {
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) };
  } finally {
    client.close();
  }
}

/**
 * A box whose Anthropic requests go to `modelUrl` with the vault's key `key`, and whose audit
 * writes fail (as on a full disk) whenever `fail()` says.
 */
export function startFailingBox(
  modelUrl: string,
  options: { fail: () => boolean; key: string },
): Promise<TestBox> {
  return startBox({
    toml: `[models]\nanthropic_base_url = "${modelUrl}"\n`,
    fileOps: {
      async write(file, bytes) {
        if (options.fail()) throw new Error("No space left on device (os error 28) (test)");
        await realFileOps.write(file, bytes);
      },
    },
    core: {
      vault: {
        value: (name) => (name === "ANTHROPIC_API_KEY" ? options.key : undefined),
        names: () => ["ANTHROPIC_API_KEY"],
      },
    },
  });
}

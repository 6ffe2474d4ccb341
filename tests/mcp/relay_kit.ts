/** The MCP relay tests' kit: a box, a task and the official SDK's client of `gurt <words>` on it. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { gurtArgs, startBox, type TestBox, type TestTask } from "../kit/mod.ts";

/** The text of a tool result: its content's texts, joined. */
export function textOf(result: unknown): string {
  return (result as { content: { text: string }[] }).content.map((c) => c.text).join("");
}

/** Runs `work` with a box (wait_ms 60 s) and a client of `gurt <words>` on a task, closed after. */
export async function withRelay(
  words: string[],
  work: (box: TestBox, client: Client, task: TestTask) => Promise<void>,
): Promise<void> {
  const box = await startBox({ env: { BOX_APPROVAL_WAIT_MS: "60000" } });
  const client = new Client({ name: "gurt-test", version: "0.0.0" });
  try {
    const task = await box.startTask({ tools: ["example.echo"] });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: gurtArgs(words),
        env: { ...Deno.env.toObject(), BOX_SOCKET: task.socket, BOX_TASK: task.id },
        stderr: "inherit",
      }),
    );
    await work(box, client, task);
  } finally {
    await client.close();
    await box.close();
  }
}

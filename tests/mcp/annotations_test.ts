/**
 * Whether a tool changes nothing is part of its definition; GET /tools publishes it as `readOnly`
 * and `gurt mcp` turns it into the MCP annotations clients gate on (Codex's workspace-write runs
 * only readOnlyHint tools unasked; Droid runs them at its default autonomy).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { assertEquals } from "../assert.ts";
import { gurtArgs, startBox } from "../kit/mod.ts";

const TOOLS = [
  "example.echo",
  "example.spend",
  "example.note",
  "read_file",
  "write_file",
  "shell",
  "http_fetch",
];

/** The tools that change nothing; every other one may. */
const READ_ONLY = new Set(["example.echo", "read_file", "http_fetch"]);

Deno.test("GET /tools says which tools change nothing, and gurt mcp annotates them readOnlyHint, the others destructiveHint", async () => {
  const box = await startBox();
  const client = new Client({ name: "gurt-test", version: "0.0.0" });
  try {
    const task = await box.startTask({ tools: TOOLS });
    const listing = (await task.request("GET", "/tools")).body as {
      name: string;
      readOnly: boolean;
    }[];
    assertEquals(
      listing.map((tool) => [tool.name, tool.readOnly]),
      TOOLS.map((name) => [name, READ_ONLY.has(name)]),
    );

    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: gurtArgs(["mcp"]),
        env: { ...Deno.env.toObject(), BOX_SOCKET: task.socket, BOX_TASK: task.id },
        stderr: "inherit",
      }),
    );
    const listed = (await client.listTools()).tools as {
      name: string;
      annotations?: Record<string, unknown>;
    }[];
    const annotations = Object.fromEntries(listed.map((tool) => [tool.name, tool.annotations]));
    for (const name of TOOLS) {
      const readOnly = READ_ONLY.has(name);
      assertEquals(annotations[name.replaceAll(".", "__")], {
        title: name,
        readOnlyHint: readOnly,
        destructiveHint: !readOnly,
      }, name);
    }
    // Asking the owner changes nothing on the box: clients that gate on the hint let it through.
    assertEquals(annotations.box_ask, {
      title: "Ask the box owner",
      readOnlyHint: true,
      destructiveHint: false,
    });
  } finally {
    await client.close();
    await box.close();
  }
});

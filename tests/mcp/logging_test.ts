/**
 * `gurt mcp` and MCP's logging utility (the conformance suite's logging-set-level scenario),
 * driven by the official SDK's client over stdio against a real core's task socket: it declares
 * `logging`, answers `logging/setLevel` with `{}` (and -32602 for a level MCP has not), sends
 * nothing before a level is set, and after it only its own lines at or above the level, none
 * holding a call's input or output.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  EmptyResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals } from "../assert.ts";
import { grant, gurtArgs, startBox } from "../kit/mod.ts";

type Line = { level: string; logger?: string; data: unknown };

Deno.test("gurt mcp declares logging, answers logging/setLevel, and sends only its own lines at or above the level", async () => {
  const box = await startBox({ grants: { echo: grant({ tool: "example.echo" }) } });
  const client = new Client({ name: "gurt-test", version: "0.0.0" });
  const lines: Line[] = [];
  const all: Line[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (note: { params: unknown }) => {
    lines.push(note.params as Line);
    all.push(note.params as Line);
  });
  try {
    const task = await box.startTask({ tools: ["example.echo", "read_file"] });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: gurtArgs(["mcp"]),
        env: { ...Deno.env.toObject(), BOX_SOCKET: task.socket, BOX_TASK: task.id, NO_COLOR: "1" },
        stderr: "inherit",
      }),
    );
    assertEquals(client.getServerCapabilities()?.logging, {});

    // Every line that reaches the client before the ping's answer is in `lines` after it.
    const canary = `canary-${crypto.randomUUID()}`;
    const echo = async () => {
      await client.callTool({ name: "example__echo", arguments: { text: canary } });
      await client.ping();
    };

    await echo();
    assertEquals(lines, [], "nothing is sent before the client sets a level");

    const refused = await client.request(
      { method: "logging/setLevel", params: { level: "banana" } },
      EmptyResultSchema,
    ).then(() => null, (error: unknown) => error);
    assert(refused instanceof McpError, String(refused));
    assertEquals(refused.code, -32602);

    assertEquals(await client.setLoggingLevel("debug"), {});
    await echo();
    assertEquals(lines.map((line) => [line.level, line.logger, line.data]), [
      ["debug", "gurt", "tools/call: example__echo"],
      ["info", "gurt", "example.echo: answered"],
    ]);

    lines.length = 0;
    assertEquals(await client.setLoggingLevel("warning"), {});
    await echo();
    await client.callTool({ name: "read_file", arguments: { path: `/${canary}` } });
    await client.ping();
    assertEquals(lines.map((line) => [line.level, line.data]), [
      ["warning", "read_file: not run (denied, refused or failed; the agent has the text)"],
    ]);

    lines.length = 0;
    assertEquals(await client.setLoggingLevel("error"), {});
    await client.callTool({ name: "read_file", arguments: { path: `/${canary}` } });
    await client.ping();
    assertEquals(lines, []);
    assertEquals(all.length, 3);
    assert(!JSON.stringify(all).includes(canary), "no line holds a call's input or output");
  } finally {
    await client.close();
    await box.close();
  }
});

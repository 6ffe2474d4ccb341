/** A `--worker cmd` task is offered `gurt mcp` as an MCP server configuration that works. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { assertEquals } from "../assert.ts";
import { startBox, until } from "../kit/mod.ts";

Deno.test("a cmd worker gets BOX_MCP_CONFIG naming mcp.json in its task folder, whose server lists the task's tools", async () => {
  const box = await startBox();
  const client = new Client({ name: "gurt-test", version: "0.0.0" });
  try {
    const started = await box.admin("POST", "/tasks", {
      worker: {
        kind: "cmd",
        command: ["sh", "-c", 'test -f "$BOX_MCP_CONFIG" && echo found && exec sleep 60'],
      },
      tools: ["example.echo"],
    });
    const id = started.body.task.id;
    const path = `${box.home}/tasks/${id}/mcp.json`;
    const config = JSON.parse(await Deno.readTextFile(path));
    const server = config.mcpServers.box;
    assertEquals(server.env, { BOX_SOCKET: `${box.home}/tasks/${id}/broker.sock`, BOX_TASK: id });
    assertEquals(server.args.at(-1), "mcp");
    await client.connect(
      new StdioClientTransport({
        command: server.command,
        args: server.args,
        env: { ...Deno.env.toObject(), ...server.env },
        stderr: "inherit",
      }),
    );
    const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
    assertEquals(tools.sort(), ["box_ask", "example__echo"]);
    // The worker found the file its variable names.
    const log = `${box.home}/tasks/${id}/worker.log`;
    await until(async () => (await Deno.readTextFile(log).catch(() => "")).includes("found"));
    const stopped = await box.admin("POST", `/tasks/${id}/stop`);
    assertEquals(stopped.body.task.state, "stopped");
  } finally {
    await client.close();
    await box.close();
  }
});

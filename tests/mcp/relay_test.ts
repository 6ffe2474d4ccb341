/** `gurt mcp` driven by the official SDK's client over stdio, against a real core's task socket. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { assert, assertEquals } from "../assert.ts";
import { askKey, CallKeys, mcpName, toolName } from "../../mod/mcp/mod.ts";
import { grant, gurtArgs, pendingApproval, startBox } from "../kit/mod.ts";

type ToolResult = { content: { type: string; text: string }[]; isError?: boolean };

function textOf(result: unknown): string {
  return (result as ToolResult).content.map((c) => c.text).join("");
}

Deno.test("gurt mcp: lists the task's tools with __, calls one, a pending answer and a denial are plain text", async () => {
  const box = await startBox({
    grants: {
      echo: grant({ tool: "example.echo" }),
      spend: grant({ tool: "example.spend", mode: "ask" }),
    },
    env: { BOX_APPROVAL_WAIT_MS: "200" },
  });
  const client = new Client({ name: "gurt-test", version: "0.0.0" });
  try {
    const task = await box.startTask({ tools: ["example.echo", "example.spend", "read_file"] });
    const transport = new StdioClientTransport({
      command: Deno.execPath(),
      args: gurtArgs(["mcp"]),
      env: { ...Deno.env.toObject(), BOX_SOCKET: task.socket, BOX_TASK: task.id, NO_COLOR: "1" },
      stderr: "inherit",
    });
    await client.connect(transport);
    const listed = await client.listTools();
    assertEquals(listed.tools.map((t: { name: string }) => t.name).sort(), [
      "box_ask",
      "example__echo",
      "example__spend",
      "read_file",
    ]);

    const echoed = await client.callTool({ name: "example__echo", arguments: { text: "hello" } });
    assertEquals(textOf(echoed), '{"text":"hello"}');

    const denied = await client.callTool({
      name: "read_file",
      arguments: { path: "/etc/hostname" },
    });
    assertEquals(textOf(denied), "Denied: no grant allows this call.");
    assert(denied.isError !== true, "a denial is a plain result, not an error");

    const pending = await client.callTool({ name: "example__spend", arguments: { cents: 2 } });
    assertEquals(
      textOf(pending),
      "Waiting for the box owner to approve this spend. Call this tool again to check.",
    );
    assert(pending.isError !== true, "a pending answer is a plain result, not an error");
    const id = await pendingApproval(box, task);
    const again = client.callTool({ name: "example__spend", arguments: { cents: 2 } });
    await box.admin("POST", `/approvals/${id}/approve`);
    const paid = JSON.parse(textOf(await again));
    assertEquals(paid.paid, 2);

    const journal = (await box.admin("GET", `/tasks/${task.id}`)).body.journal;
    const keys = journal.filter((l: { type: string }) => l.type === "tool.result")
      .map((l: { key: string }) => l.key);
    assertEquals(keys.length, 3);
    assert(/^mcp\.example\.echo\.[0-9a-f]{16}\.1$/.test(keys[0]), keys[0]);
    assert(/^mcp\.example\.spend\.[0-9a-f]{16}\.1$/.test(keys[2]), keys[2]);
    assertEquals(journal.filter((l: { type: string }) => l.type === "tool.call").length, 2);
  } finally {
    await client.close();
    await box.close();
  }
});

Deno.test("relay keys: a pending call keeps its key, an answered one moves to the next count", async () => {
  const keys = new CallKeys();
  const first = await keys.key("example.spend", { cents: 2, payee: "a" });
  assertEquals(await keys.key("example.spend", { payee: "a", cents: 2 }), first);
  keys.answered(first);
  const second = await keys.key("example.spend", { cents: 2, payee: "a" });
  assertEquals(second, first.replace(/\.1$/, ".2"));
  assert(await keys.key("example.spend", { cents: 3 }) !== first, "another input, another key");
  assertEquals(await askKey("may I?"), await askKey("may I?"));
  assert((await askKey("may I?")).startsWith("mcp.ask."));
  assertEquals([mcpName("wallet.pay"), toolName("wallet__pay")], ["wallet__pay", "wallet.pay"]);
});

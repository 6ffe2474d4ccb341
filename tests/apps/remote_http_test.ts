/**
 * A remote MCP app (kind "mcp-http") against a Streamable HTTP server this test runs on loopback
 * with the SDK, which answers only requests that carry `Authorization: Bearer <token>`: its tool
 * echoes the headers it saw. The bearer comes from the vault: it reaches the server, and neither
 * the task (redacted in the result) nor the journal nor the audit log; a wrong token fails the call
 * with a sentence, not a hang.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { auditRecords } from "../kit/box.ts";
import { startAppBox } from "./app_kit.ts";

const TOKEN = "rt-remote-bearer-5f1e2d3c4b5a69788796a5b4";
const WRONG = "rt-wrong-bearer-00112233445566778899aabb";

/** A stateless Streamable HTTP MCP server on loopback; `seen` keeps each request's headers. */
function remoteServer(token: string) {
  const seen: Record<string, string>[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const headers = Object.fromEntries(request.headers.entries());
    seen.push(headers);
    if (request.headers.get("authorization") !== `Bearer ${token}`) {
      return new Response("unauthorized", { status: 401 });
    }
    const mcp = new McpServer({ name: "remote-test", version: "1.0.0" });
    mcp.registerTool("show_headers", { description: "The headers of this request." }, () => ({
      content: [{ type: "text", text: JSON.stringify(headers) }],
    }));
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await mcp.connect(transport);
    return await transport.handleRequest(request);
  });
  return { server, seen, port: server.addr.port };
}

Deno.test({
  name: "mcp-http app: the bearer from the vault reaches the server, never the task",
  fn: async () => {
    const remote = remoteServer(TOKEN);
    const box = await startAppBox();
    try {
      await box.setKey("REMOTE_TOKEN", TOKEN);
      const source = await box.source(
        "remote",
        [
          'kind = "mcp-http"',
          `url = "http://127.0.0.1:${remote.port}/mcp"`,
          "[headers]",
          'Authorization = { secret = "REMOTE_TOKEN", format = "Bearer {}" }',
          "[secrets.REMOTE_TOKEN]",
          "",
        ].join("\n"),
      );
      const added = await box.add(source, "remote");
      assertEquals(added.status, 200, JSON.stringify(added.body));
      const names = (added.body.app.tool_list as { name: string }[]).map((tool) => tool.name);
      assertEquals(names, ["remote.show_headers"]);
      await box.grant({ tool: "remote.show_headers" });
      const task = await box.task(["remote.*"]);
      const before = remote.seen.length;
      const shown = await box.call(task, "remote.show_headers", {});
      assertEquals(shown.status, 200, JSON.stringify(shown.body));
      assertEquals(shown.body.ok, true, JSON.stringify(shown.body));
      // The server saw the header the manifest built from the vault...
      assert(remote.seen.length > before, "the call did not reach the server");
      for (const headers of remote.seen) assertEquals(headers.authorization, `Bearer ${TOKEN}`);
      // ...and echoed it, but the task reads it redacted.
      const text = JSON.stringify(shown.body);
      assertStringIncludes(text, "authorization");
      assert(!text.includes(TOKEN), `the bearer reached the task: ${text}`);
      const journal = await Deno.readTextFile(`${box.home}/tasks/${task}/journal.jsonl`);
      assertStringIncludes(journal, "remote.show_headers");
      assert(!journal.includes(TOKEN), "the bearer is in the task's journal");
      const audit = JSON.stringify(await auditRecords(box.home));
      assertStringIncludes(audit, "remote.show_headers");
      assert(!audit.includes(TOKEN), "the bearer is in the audit log");

      // A wrong token: the server refuses it, and the call fails with a sentence.
      await box.setKey("REMOTE_TOKEN", WRONG);
      const refused = await box.call(task, "remote.show_headers", {});
      assertEquals(refused.body.ok, false, JSON.stringify(refused.body));
      assertStringIncludes(refused.body.error, "the app remote");
      assertStringIncludes(
        refused.body.error,
        "answered HTTP 401: the server refused the credentials",
      );
      assertStringIncludes(refused.body.error, "runbook.md#app-not-running");
      assert(!JSON.stringify(refused.body).includes(WRONG), "the wrong bearer reached the task");
      assertEquals(remote.seen.at(-1)?.authorization, `Bearer ${WRONG}`);
    } finally {
      await box.close();
      await remote.server.shutdown();
    }
  },
});

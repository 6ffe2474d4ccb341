/**
 * `gurt mcp --wait-ms N`: a call or a question that waits on the box owner is held at most N ms
 * (default 50 s, under every client's own call timeout), then the agent reads the "call again"
 * text instead of a timeout; the call again joins the same approval and runs once.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { assert, assertEquals } from "../assert.ts";
import { grant, gurt, gurtArgs, pendingApproval, startBox } from "../kit/mod.ts";
import { textOf, withRelay } from "./relay_kit.ts";

const PENDING = "Waiting for the box owner to approve this spend. Call this tool again to check.";

Deno.test("gurt mcp --wait-ms 300: an ask grant's call answers the pending text in about 300 ms, and the call again after gurt approve runs once", async () => {
  const box = await startBox({
    grants: { spend: grant({ tool: "example.spend", mode: "ask" }) },
    // The core would hold the call a minute: the relay's wait is what ends it.
    env: { BOX_APPROVAL_WAIT_MS: "60000" },
  });
  const client = new Client({ name: "gurt-test", version: "0.0.0" });
  try {
    const task = await box.startTask({ tools: ["example.spend"] });
    await client.connect(
      new StdioClientTransport({
        command: Deno.execPath(),
        args: gurtArgs(["mcp", "--wait-ms", "300"]),
        env: { ...Deno.env.toObject(), BOX_SOCKET: task.socket, BOX_TASK: task.id },
        stderr: "inherit",
      }),
    );
    const started = performance.now();
    const pending = await client.callTool({ name: "example__spend", arguments: { cents: 3 } });
    const waited = performance.now() - started;
    assertEquals(textOf(pending), PENDING);
    assert(waited >= 300 && waited < 10_000, `the call waited ${waited} ms`);

    const id = await pendingApproval(box, task);
    const approvals = (await box.admin("GET", "/approvals")).body.items;
    assertEquals(approvals.length, 1, "one approval, still open after the pending answer");
    const approved = await gurt(["approve", String(id)], { env: { BOX_HOME: box.home } });
    assertEquals(approved.code, 0, approved.stderr);
    const paid = JSON.parse(
      textOf(await client.callTool({ name: "example__spend", arguments: { cents: 3 } })),
    );
    assertEquals(paid.paid, 3);

    const journal = (await box.admin("GET", `/tasks/${task.id}`)).body.journal as {
      type: string;
    }[];
    assertEquals(journal.filter((line) => line.type === "tool.call").length, 1);
    assertEquals(journal.filter((line) => line.type === "tool.result").length, 1);
    const decisions = (await box.records()).filter((
      r: { event: { type: string; tool?: string } },
    ) => r.event.type === "decision" && r.event.tool === "example.spend");
    assertEquals(decisions.length, 1, "one decision: the call again joined the same approval");
  } finally {
    await client.close();
    await box.close();
  }
});

Deno.test("gurt mcp --wait-ms 300: box_ask answers 'not answered yet' in about 300 ms, and the same question again gets the owner's answer", async () => {
  await withRelay(["mcp", "--wait-ms=300"], async (box, client, task) => {
    const question = { name: "box_ask", arguments: { question: "May I?" } };
    const started = performance.now();
    const first = await client.callTool(question);
    const waited = performance.now() - started;
    assert(waited >= 300 && waited < 10_000, `the question waited ${waited} ms`);
    assert(textOf(first).includes("has not answered yet"), textOf(first));
    const id = await pendingApproval(box, task);
    await box.admin("POST", `/approvals/${id}/approve`);
    assertEquals(textOf(await client.callTool(question)), "The owner said yes.");
  });
});

Deno.test("gurt mcp refuses a --wait-ms that is not a whole number of milliseconds", async () => {
  for (const value of ["abc", "-1", "1.5", ""]) {
    const run = await gurt(["mcp", "--wait-ms", value], {
      env: { BOX_SOCKET: "/nonexistent/broker.sock" },
    });
    assertEquals(run.code, 1, `${value}: ${run.stderr}`);
    assert(run.stderr.includes("--wait-ms"), run.stderr);
  }
  const help = await gurt(["mcp", "--help"]);
  assert(help.stdout.includes("--wait-ms") && help.stdout.includes("50000"), help.stdout);
});

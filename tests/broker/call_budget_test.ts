/**
 * A task's budget counts the calls in flight (docs/grants.md#budgets): a call whose cost, with the
 * cents spent and the cents reserved by calls still running, would pass the budget becomes a budget
 * approval, through a real core and its real sockets.
 */
import { assertEquals } from "../assert.ts";
import { grant, heldTool, type Json, pendingApproval, startBox, until } from "../kit/mod.ts";

Deno.test("a 10-cent budget with a 6-cent call still running: a second 6-cent call with another key becomes a budget approval and does not run", async () => {
  const slow = heldTool("test.slow_spend");
  const box = await startBox({
    grants: { slow: grant({ tool: "test.slow_spend" }) },
    tools: [slow.tool],
  });
  try {
    const task = await box.startTask({ tools: ["test.slow_spend"], budgetCents: 10 });
    const first = task.call("test.slow_spend", { n: 1 }, "a");
    await until(() => slow.started.length === 1); // the first call is running: 6 cents reserved
    const second = task.call("test.slow_spend", { n: 2 }, "b");
    const decisionOf = async (key: string): Promise<Json> =>
      (await box.records()).find((r) => r.event.type === "decision" && r.event.call === key);
    await until(async () => (await decisionOf("b")) !== undefined);

    // 0 spent + 6 reserved + 6 asked > 10: the owner is asked, and nothing runs meanwhile.
    assertEquals((await decisionOf("b")).event.outcome, { outcome: "ask" });
    const id = await pendingApproval(box, task);
    assertEquals(id, (await decisionOf("b")).seq);
    const shown = (await box.admin("GET", "/approvals")).body.items;
    assertEquals(
      shown.map((item: Json) => [item.key, item.kind, item.costCents]),
      [["b", "budget", 6]],
    );
    assertEquals(slow.started, [1], "the second call ran while the first held its 6 cents");

    // The first call ends and is charged; refusing the spend answers `not approved`.
    slow.release();
    assertEquals(await first, { ok: true, output: { n: 1 } });
    assertEquals((await task.request("GET", "/task")).body.task.spentCents, 6);
    assertEquals((await box.admin("POST", `/approvals/${id}/refuse`)).status, 200);
    assertEquals(await second, { ok: false, error: "not approved" });
    assertEquals(slow.started, [1]);
    assertEquals((await task.request("GET", "/task")).body.task.spentCents, 6);
  } finally {
    slow.release();
    await box.close();
  }
});

Deno.test("a task over its budget still makes a free call as its grant says; a call with a cost of its own asks", async () => {
  const box = await startBox({
    grants: {
      echo: grant({ tool: "example.echo" }),
      spend: grant({ tool: "example.spend" }),
    },
  });
  try {
    const task = await box.startTask({ tools: ["example.echo", "example.spend"], budgetCents: 5 });
    const charged = await task.request("POST", "/cost", { cents: 8, what: "earlier work" });
    assertEquals(charged.status, 200, JSON.stringify(charged.body));
    assertEquals((await task.request("GET", "/task")).body.task.spentCents, 8);

    // 8 spent + 0 for this call: the call takes the task no further, so its auto grant runs it.
    const echo = await task.request("POST", "/call", {
      tool: "example.echo",
      input: { text: "hi" },
      key: "free",
      waitMs: 0,
    });
    assertEquals(echo.body, { ok: true, output: { text: "hi" } });
    const decisionOf = async (key: string): Promise<Json> =>
      (await box.records()).find((r) => r.event.type === "decision" && r.event.call === key);
    assertEquals((await decisionOf("free")).event.outcome, { outcome: "allowed" });

    // 8 spent + 1 of its own: over the budget, so the owner is asked.
    const spend = await task.request("POST", "/call", {
      tool: "example.spend",
      input: { cents: 1 },
      key: "paid",
      waitMs: 0,
    });
    assertEquals(spend.body.pending, true);
    assertEquals((await decisionOf("paid")).event.outcome, { outcome: "ask" });
    const shown = (await box.admin("GET", "/approvals")).body.items;
    assertEquals(shown.map((item: Json) => [item.key, item.kind]), [["paid", "budget"]]);
  } finally {
    await box.close();
  }
});

/**
 * A task's model requests over its budget (docs/grants.md#budgets), through a real core, the
 * task's real model endpoint socket and a service on loopback: at or past its budget, the next
 * request is held as one owner approval of kind budget (tool box.model) that the requests arriving
 * while it is open share, recorded like a tool call's (a Decision record, then the Approval record).
 * Approved, they are sent, and so is every request until the task's spending grows again; refused,
 * 403 in the service's format with the owner's reason; still open when the wait ends, 429 naming
 * `gurt approve N`, and a retry waits on the same approval.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type Json, startBox, type TestBox, until } from "../kit/mod.ts";

const KEY = "sk-ant-test-key-model-budget";

/** A service that answers every Messages request with no usage, so it charges nothing. */
function startService(): { url: string; seen: Json[]; close(): Promise<void> } {
  const seen: Json[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const body = await request.json();
      seen.push(body);
      return Response.json({
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: body.model,
        content: [{ type: "text", text: "ok" }],
        stop_reason: "end_turn",
        usage: { input_tokens: 0, output_tokens: 0 },
      });
    },
  );
  return { url: `http://127.0.0.1:${server.addr.port}`, seen, close: () => server.shutdown() };
}

interface Setup {
  box: TestBox;
  service: { url: string; seen: Json[] };
  task: string;
  /** Sends a Messages request to the task's model endpoint; `signal` to leave early. */
  ask(signal?: AbortSignal): Promise<{ status: number; body: Json; retryAfter: string | null }>;
  /** Charges the task `cents` through its broker socket (POST /cost). */
  spend(cents: number): Promise<void>;
  pending(): Promise<Json[]>;
}

async function withBudgetTask(
  options: { budgetCents: number; toml?: string },
  work: (setup: Setup) => Promise<void>,
): Promise<void> {
  const service = startService();
  const vault: Record<string, string> = { ANTHROPIC_API_KEY: KEY };
  const box = await startBox({
    core: { vault: { value: (n) => vault[n], names: () => Object.keys(vault) } },
    toml: `[models]\nanthropic_base_url = "${service.url}"\n${options.toml ?? ""}`,
  });
  const client = (path: string) => Deno.createHttpClient({ proxy: { transport: "unix", path } });
  try {
    const started = await box.admin("POST", "/tasks", {
      worker: { kind: "none" },
      tools: ["example.echo"],
      budgetCents: options.budgetCents,
    });
    assertEquals(started.status, 200, JSON.stringify(started.body));
    const task = started.body.task.id as string;
    const dir = `${box.home}/tasks/${task}`;
    const model = client(`${dir}/model.sock`);
    const broker = client(`${dir}/broker.sock`);
    try {
      await work({
        box,
        service,
        task,
        async ask(signal) {
          const answer = await fetch("http://task/v1/messages", {
            method: "POST",
            client: model,
            signal,
            headers: {
              "content-type": "application/json",
              "x-api-key": "placeholder",
              "anthropic-version": "2023-06-01",
            },
            body: JSON.stringify({
              model: "claude-sonnet-4-5",
              max_tokens: 10,
              messages: [{ role: "user", content: "hi" }],
            }),
          });
          return {
            status: answer.status,
            body: await answer.json(),
            retryAfter: answer.headers.get("retry-after"),
          };
        },
        async spend(cents) {
          const answer = await fetch("http://task/cost", {
            method: "POST",
            client: broker,
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ cents, what: "test spend" }),
          });
          assertEquals(answer.status, 200, await answer.text());
        },
        async pending() {
          return (await box.admin("GET", "/approvals")).body.items;
        },
      });
    } finally {
      model.close();
      broker.close();
    }
  } finally {
    await box.close();
    await service.close();
  }
}

Deno.test("at its budget a task's model requests wait on one budget approval; approved, they are sent until its spending grows, and then it asks again", async () => {
  await withBudgetTask({ budgetCents: 5 }, async ({ box, service, task, ask, spend, pending }) => {
    // Under its budget: sent at once, nothing asked.
    assertEquals((await ask()).status, 200);
    await spend(5);

    // At its budget: two requests, one approval.
    const first = ask();
    await until(async () => (await pending()).length === 1);
    const second = ask();
    assertEquals((await box.admin("GET", `/tasks/${task}`)).body.task.state, "waiting");
    const items = await pending();
    assertEquals(items.length, 1);
    const item = items[0];
    assertEquals([item.task, item.kind, item.tool, item.grant, item.costCents], [
      task,
      "budget",
      "box.model",
      null,
      null,
    ]);
    const shown = JSON.parse(item.arguments);
    assertEquals([shown.service, shown.model, shown.path, shown.spentCents, shown.budgetCents], [
      "anthropic",
      "claude-sonnet-4-5",
      "/v1/messages",
      5,
      5,
    ]);
    assertStringIncludes(shown.why, "model spend");
    assertStringIncludes(shown.why, "claude-sonnet-4-5");
    assertEquals(service.seen.length, 1, "a held request reached the service");

    // The Decision record: tool box.model, ask, no grant; its seq is the approval's id.
    const decision = (await box.records()).find((r) => r.seq === item.approval);
    assertEquals(decision.event.type, "decision");
    assertEquals([decision.event.tool, decision.event.outcome, decision.event.grant], [
      "box.model",
      { outcome: "ask" },
      null,
    ]);

    const approved = await box.admin("POST", `/approvals/${item.approval}/approve`, {});
    assertEquals(approved.status, 200, JSON.stringify(approved.body));
    assertEquals((await first).status, 200);
    assertEquals((await second).status, 200);
    assertEquals(service.seen.length, 3);
    const answer = (await box.records()).find((r) =>
      r.event.type === "approval" && r.event.decision === item.approval
    );
    assertEquals([answer.event.answer, answer.event.outcome], ["approved", { outcome: "allowed" }]);
    const asks = (await box.records()).filter((r) =>
      r.event.type === "decision" && r.event.tool === "box.model"
    );
    assertEquals(asks.length, 1, "the two requests asked the owner twice");

    // The approval holds while the task's spending stays where it was.
    assertEquals((await ask()).status, 200);
    assertEquals(await pending(), []);

    // Spending grows: the next request asks again, under a new approval, and the owner refuses it.
    await spend(1);
    const third = ask();
    await until(async () => (await pending()).length === 1);
    const again = (await pending())[0].approval;
    assert(again > item.approval);
    const refused = await box.admin("POST", `/approvals/${again}/refuse`, {
      reason: "enough for today",
    });
    assertEquals(refused.status, 200, JSON.stringify(refused.body));
    const denied = await third;
    assertEquals(denied.status, 403);
    assertEquals(denied.body.error.type, "permission_error");
    assertStringIncludes(denied.body.error.message, "refused");
    assertStringIncludes(denied.body.error.message, "enough for today");
    assert(denied.body.error.message.endsWith("see runbook.md#model-budget"));
    assertEquals(service.seen.length, 4);
    const closed = (await box.records()).find((r) =>
      r.event.type === "approval" && r.event.decision === again
    );
    assertEquals(closed.event.answer, "refused");
  });
});

Deno.test("a held model request still open when the wait ends is a 429 naming gurt approve N; a retry waits on the same approval; the last to leave withdraws it", async () => {
  const toml = "[approvals]\nwait_ms = 1000\n";
  await withBudgetTask({ budgetCents: 0, toml }, async ({ box, service, ask, pending }) => {
    // The only request waiting leaves: its approval is withdrawn, and nothing is written for it.
    const leaving = new AbortController();
    const gone = ask(leaving.signal).catch((error) => error);
    await until(async () => (await pending()).length === 1);
    leaving.abort();
    assert((await gone) instanceof Error);
    await until(async () => (await pending()).length === 0);
    assertEquals((await box.records()).filter((r) => r.event.type === "approval"), []);

    // Still open when the wait ends: 429 in Anthropic's format, naming the approval.
    const first = await ask();
    assertEquals(first.status, 429);
    assertEquals(first.retryAfter, "1");
    assertEquals(first.body.error.type, "rate_limit_error");
    const [item] = await pending();
    assertStringIncludes(first.body.error.message, `gurt approve ${item.approval}`);
    assertStringIncludes(first.body.error.message, "try again");
    assert(first.body.error.message.endsWith("see runbook.md#model-budget"));

    // An SDK's retry waits on the same approval.
    const retried = await ask();
    assertEquals(retried.status, 429);
    assertStringIncludes(retried.body.error.message, `gurt approve ${item.approval}`);
    assertEquals((await pending()).map((p: Json) => p.approval), [item.approval]);
    assertEquals(service.seen.length, 0);
  });
});

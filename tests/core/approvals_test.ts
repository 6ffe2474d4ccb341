/** Approvals (docs/grants.md#approvals), through the real admin and task sockets of a real core. */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type AuditFileOps, realFileOps } from "../../mod/audit/mod.ts";
import { counter, grant, pendingApproval, startBox, until, withBox } from "../kit/mod.ts";

const ASK_SPEND = { spend: grant({ tool: "example.spend", mode: "ask" }) };

/**
 * A core (with these audit file ops) where test.count needs the owner's approval, a task, and its
 * call of test.count (key k1, aborted by `signal`) waiting as approval `id`; the tool's runs.
 */
async function waitingCount(options: { fileOps?: Partial<AuditFileOps>; signal?: AbortSignal }) {
  const { runs, options: counted } = counter("ask");
  const box = await startBox({ ...counted, fileOps: options.fileOps });
  try {
    const task = await box.startTask({ tools: ["test.count"] });
    const answer = task.call("test.count", { n: 1 }, "k1", options.signal);
    return { box, runs, task, answer, id: await pendingApproval(box, task) };
  } catch (error) {
    await box.close();
    throw error;
  }
}

Deno.test("approve: the waiting call runs once and the Approval record precedes its Result", async () => {
  await withBox({ grants: ASK_SPEND }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend"] });
    const answer = task.call("example.spend", { cents: 7 }, "k1");
    const id = await pendingApproval(box, task);
    const approved = await box.admin("POST", `/approvals/${id}/approve`);
    assertEquals(approved.body, { outcome: { outcome: "allowed" } });
    const result = await answer;
    assertEquals(result.ok, true);
    assertEquals(result.output.paid, 7);
    const types = (await box.records()).map((r) => r.event.type);
    assertEquals(types, ["task_started", "decision", "approval", "result"]);
    const records = await box.records();
    assertEquals(records[1].seq, id);
    assertEquals(records[2].event.decision, id);
    assertEquals(records[3].event.decision, id);
  });
});

Deno.test("refuse: the call answers the model-facing refusal and nothing runs", async () => {
  const { box, runs, answer, id } = await waitingCount({});
  try {
    const refused = await box.admin("POST", `/approvals/${id}/refuse`, { reason: "not now" });
    assertEquals(refused.status, 200);
    assertEquals(await answer, { ok: false, error: "Denied: the owner refused this call." });
    assertEquals(runs.length, 0);
    const approval = (await box.records()).find((r) => r.event.type === "approval");
    assertEquals(approval.event.answer, "refused");
    assertEquals(approval.event.reason, "not now");
    assertEquals(approval.event.outcome, { outcome: "denied", reason: "approval_refused" });
  } finally {
    await box.close();
  }
});

Deno.test("a refused spend over budget answers `not approved`", async () => {
  await withBox({ grants: { spend: grant({ tool: "example.spend" }) } }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend"], budgetCents: 10 });
    assertEquals((await task.call("example.spend", { cents: 6 }, "a")).ok, true);
    const answer = task.call("example.spend", { cents: 6 }, "b");
    const id = await pendingApproval(box, task);
    const shown = (await box.admin("GET", "/approvals")).body.items[0];
    assertEquals([shown.kind, shown.costCents], ["budget", 6]);
    await box.admin("POST", `/approvals/${id}/refuse`);
    assertEquals(await answer, { ok: false, error: "not approved" });
  });
});

Deno.test("expiry: with ttl_ms 100 the approval expires and the call is denied", async () => {
  await withBox({ grants: ASK_SPEND, toml: "[approvals]\nttl_ms = 100\n" }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend"] });
    const answer = await task.call("example.spend", { cents: 1 }, "k1");
    assertEquals(answer, {
      ok: false,
      error: "Denied: the approval request expired without an answer.",
    });
    const approval = (await box.records()).find((r) => r.event.type === "approval");
    assertEquals([approval.event.answer, approval.event.outcome.reason], [
      "expired",
      "approval_expired",
    ]);
  });
});

Deno.test("approve after the grant file was removed: denied no_grant, nothing runs", async () => {
  const { box, runs, answer, id } = await waitingCount({});
  try {
    await box.removeGrant("count");
    const approved = await box.admin("POST", `/approvals/${id}/approve`);
    assertEquals(approved.body.outcome, { outcome: "denied", reason: "no_grant" });
    assertEquals(await answer, { ok: false, error: "Denied: no grant allows this call." });
    assertEquals(runs.length, 0);
  } finally {
    await box.close();
  }
});

Deno.test("approve after the taint rose past max_taint: denied taint_too_high", async () => {
  await withBox({
    grants: {
      spend: grant({ tool: "example.spend", mode: "ask", max_taint: "private" }),
      echo: grant({ tool: "example.echo", result_class: "secret" }),
    },
  }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend", "example.echo"] });
    const answer = task.call("example.spend", { cents: 1 }, "k1");
    const id = await pendingApproval(box, task);
    assertEquals((await task.call("example.echo", { text: "s" }, "k2")).ok, true);
    const approved = await box.admin("POST", `/approvals/${id}/approve`);
    assertEquals(approved.body.outcome, { outcome: "denied", reason: "taint_too_high" });
    assertEquals(await answer, {
      ok: false,
      error: "Denied: this session has seen data too sensitive for this call.",
    });
    const approval = (await box.records()).find((r) => r.event.type === "approval");
    assertEquals(approval.event.taint, "secret");
  });
});

Deno.test("an unknown approval id is no_such_approval for approve and refuse", async () => {
  await withBox({}, async (box) => {
    for (const action of ["approve", "refuse"]) {
      const answer = await box.admin("POST", `/approvals/999/${action}`);
      assertEquals(answer.status, 404);
      assertEquals(answer.body.code, "no_such_approval");
    }
  });
});

Deno.test("a dropped connection while pending withdraws the approval and writes nothing", async () => {
  await withBox({ grants: ASK_SPEND }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend"] });
    const controller = new AbortController();
    const answer = task.call("example.spend", { cents: 1 }, "k1", controller.signal).catch((e) =>
      e
    );
    const id = await pendingApproval(box, task);
    controller.abort();
    await answer;
    await until(async () => (await box.admin("GET", "/approvals")).body.items.length === 0);
    const types = (await box.records()).map((r) => r.event.type);
    assertEquals(types, ["task_started", "decision"]);
    assertEquals(
      (await box.admin("POST", `/approvals/${id}/approve`)).body.code,
      "no_such_approval",
    );
  });
});

Deno.test("approve and refuse sent together, a hundred times: exactly one Approval each time", async () => {
  await withBox({ grants: ASK_SPEND }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend"] });
    for (let i = 0; i < 100; i++) {
      const answer = task.call("example.spend", { cents: i }, `k${i}`);
      const id = await pendingApproval(box, task);
      const [approve, refuse] = await Promise.all([
        box.admin("POST", `/approvals/${id}/approve`),
        box.admin("POST", `/approvals/${id}/refuse`),
      ]);
      const statuses = [approve.status, refuse.status].sort();
      assertEquals(statuses, [200, 404], `round ${i}`);
      const loser = approve.status === 404 ? approve : refuse;
      assertEquals(loser.body.code, "no_such_approval");
      await answer;
    }
    const approvals = (await box.records()).filter((r) => r.event.type === "approval");
    assertEquals(approvals.length, 100);
    assertEquals(new Set(approvals.map((r) => r.event.decision)).size, 100);
  });
});

Deno.test("an Approval record that cannot be written denies with audit_unavailable; nothing runs", async () => {
  let failWrites = false;
  const { box, runs, task, answer, id } = await waitingCount({
    fileOps: {
      async write(file, bytes) {
        if (failWrites) throw new Error("disk full (test)");
        await realFileOps.write(file, bytes);
      },
    },
  });
  try {
    failWrites = true;
    const approved = await box.admin("POST", `/approvals/${id}/approve`);
    assertEquals(approved.status, 503);
    assertStringIncludes(approved.body.error, "see runbook.md#audit-unavailable");
    assertEquals(await answer, {
      ok: false,
      error: "Denied: the audit log cannot be written; the owner has been told.",
    });
    assertEquals(runs.length, 0);
    failWrites = false;
    const next = await task.call("test.count", { n: 2 }, "k2");
    assertEquals(next.error, "Denied: the audit log cannot be written; the owner has been told.");
    assertEquals(runs.length, 0);
    assert(box.logs.some((line) => line.includes("see runbook.md#audit-unavailable")));
  } finally {
    await box.close();
  }
});

Deno.test("the requester gone before the run: a failed Result closes the call, nothing runs", async () => {
  let hold: (() => void) | null = null;
  let held: Promise<void> | null = null;
  const controller = new AbortController();
  const waiting = await waitingCount({
    signal: controller.signal,
    fileOps: {
      async write(file, bytes) {
        // Holds the Approval record's write until the test has dropped the connection.
        if (held !== null && new TextDecoder().decode(bytes).includes('"type":"approval"')) {
          await held;
        }
        await realFileOps.write(file, bytes);
      },
    },
  });
  const { box, runs, task, id } = waiting;
  const answer = waiting.answer.catch((e) => e);
  try {
    held = new Promise((resolve) => (hold = resolve));
    const approved = box.admin("POST", `/approvals/${id}/approve`);
    await until(() => box.core.deps.approvals.get(id) === undefined);
    controller.abort();
    await answer;
    // Wait for the core itself to see the connection gone before the approval goes on.
    const flight = box.core.tasks.handle(task.id)?.callsByKey.get("k1");
    await until(() => flight?.requesterGone === true);
    hold!();
    assertEquals((await approved).body.outcome, { outcome: "allowed" });
    await until(async () => (await box.records()).some((r) => r.event.type === "result"));
    const result = (await box.records()).find((r) => r.event.type === "result");
    assertEquals(result.event.status, "failed");
    assertEquals(runs.length, 0);
  } finally {
    await box.close();
  }
});

Deno.test("a pending call answers the pending body after wait_ms, and a retry joins it", async () => {
  await withBox({ grants: ASK_SPEND, env: { BOX_APPROVAL_WAIT_MS: "50" } }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend"] });
    const first = await task.call("example.spend", { cents: 3 }, "k1");
    assertEquals(first, {
      ok: false,
      pending: true,
      error: "Waiting for the box owner to approve this spend. Call this tool again to check.",
    });
    const id = await pendingApproval(box, task);
    const again = await task.call("example.spend", { cents: 3 }, "other-key");
    assertEquals(again.pending, true);
    assertEquals((await box.admin("GET", "/approvals")).body.items.length, 1);
    await box.admin("POST", `/approvals/${id}/approve`);
    await until(async () => (await task.call("example.spend", { cents: 3 }, "k1")).ok === true);
    const results = (await box.records()).filter((r) => r.event.type === "result");
    assertEquals(results.length, 1);
  });
});

Deno.test("ending a task closes its pending approvals as denied, answered by task ended", async () => {
  await withBox({ grants: ASK_SPEND }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend"] });
    const answer = task.call("example.spend", { cents: 1 }, "k1").catch((e) => e);
    await pendingApproval(box, task);
    await box.admin("POST", `/tasks/${task.id}/stop`);
    await answer;
    const approval = (await box.records()).find((r) => r.event.type === "approval");
    assertEquals([approval.event.answer, approval.event.by], ["refused", "task ended"]);
    const ended = (await box.records()).find((r) => r.event.type === "task_ended");
    assertEquals(ended.event.state, "stopped");
  });
});

/**
 * A /call or /ask may say how long it waits on the owner (`waitMs`), up to `[approvals] wait_ms`:
 * the MCP relay holds a call under its client's own timeout this way.
 */
import { assert, assertEquals } from "../assert.ts";
import { grant, pendingApproval, startBox } from "../kit/mod.ts";

const PENDING = "Waiting for the box owner to approve this spend. Call this tool again to check.";

Deno.test("a /call with waitMs answers pending after that long, the approval stays open, and the same key then gets the approved run", async () => {
  const box = await startBox({
    grants: { spend: grant({ tool: "example.spend", mode: "ask" }) },
    env: { BOX_APPROVAL_WAIT_MS: "60000" },
  });
  try {
    const task = await box.startTask({ tools: ["example.spend"] });
    const body = { tool: "example.spend", input: { cents: 1 }, key: "k1", waitMs: 200 };
    const started = performance.now();
    const first = await task.request("POST", "/call", body);
    const waited = performance.now() - started;
    assertEquals(first.body, { ok: false, pending: true, error: PENDING });
    assert(waited >= 200 && waited < 10_000, `waited ${waited} ms`);
    const id = await pendingApproval(box, task);
    const again = task.request("POST", "/call", body);
    await box.admin("POST", `/approvals/${id}/approve`);
    assertEquals((await again).body.output.paid, 1);
  } finally {
    await box.close();
  }
});

Deno.test("waitMs never holds a request longer than [approvals] wait_ms", async () => {
  const box = await startBox({
    grants: { spend: grant({ tool: "example.spend", mode: "ask" }) },
    env: { BOX_APPROVAL_WAIT_MS: "200" },
  });
  try {
    const task = await box.startTask({ tools: ["example.spend"] });
    const started = performance.now();
    const call = await task.request("POST", "/call", {
      tool: "example.spend",
      input: { cents: 1 },
      key: "k1",
      waitMs: 600_000,
    });
    assertEquals(call.body.pending, true);
    const ask = await task.request("POST", "/ask", { question: "q", key: "a1", waitMs: 600_000 });
    assertEquals(ask.body.pending, true);
    assert(performance.now() - started < 10_000, "each waited wait_ms, not waitMs");
  } finally {
    await box.close();
  }
});

Deno.test("a /ask with waitMs answers pending after that long", async () => {
  const box = await startBox({ env: { BOX_APPROVAL_WAIT_MS: "60000" } });
  try {
    const task = await box.startTask();
    const started = performance.now();
    const ask = await task.request("POST", "/ask", { question: "q", key: "a1", waitMs: 200 });
    assertEquals(ask.body.pending, true);
    const waited = performance.now() - started;
    assert(waited >= 200 && waited < 10_000, `waited ${waited} ms`);
  } finally {
    await box.close();
  }
});

Deno.test("a waitMs that is not a whole number of milliseconds from 0 up is a 400", async () => {
  const box = await startBox();
  try {
    const task = await box.startTask();
    for (const waitMs of [-1, 1.5, "100", null]) {
      const call = await task.request("POST", "/call", {
        tool: "example.echo",
        input: { text: "x" },
        key: `k${String(waitMs)}`,
        waitMs,
      });
      assertEquals(call.status, 400, `${waitMs}`);
      const ask = await task.request("POST", "/ask", { question: "q", key: "a", waitMs });
      assertEquals(ask.status, 400, `${waitMs}`);
    }
  } finally {
    await box.close();
  }
});

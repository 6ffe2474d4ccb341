/**
 * What /ask tells a worker beyond yes and no (docs/broker-api.md#post-ask): a pending answer names
 * the approval it waits on, so the worker can tell its agent which one; a refusal carries the
 * owner's reason, from the journal too once answered (asked again, after a restart).
 */
import { assertEquals } from "../assert.ts";
import { pendingApproval, withBox } from "../kit/mod.ts";

Deno.test("/ask answers pending with the approval it waits on, and a refusal with the owner's reason, again from the journal after a restart", async () => {
  await withBox({ env: { BOX_APPROVAL_WAIT_MS: "60000" } }, async (box) => {
    const task = await box.startTask();
    const ask = (key: string, waitMs: number) =>
      task.request("POST", "/ask", { question: "May I fetch the page?", key, waitMs });

    const pending = await ask("q1", 200);
    const id = await pendingApproval(box, task);
    assertEquals(pending.body, { pending: true, approval: id });
    const refused = await box.admin("POST", `/approvals/${id}/refuse`, { reason: "not today" });
    assertEquals(refused.status, 200);
    assertEquals((await ask("q1", 200)).body, { approved: false, reason: "not today" });

    // Refused while it waits, without a reason: no reason.
    const waiting = ask("q2", 30_000);
    const second = await pendingApproval(box, task);
    await box.admin("POST", `/approvals/${second}/refuse`);
    assertEquals((await waiting).body, { approved: false });

    await box.restart();
    assertEquals((await ask("q1", 200)).body, { approved: false, reason: "not today" });
    assertEquals((await ask("q2", 200)).body, { approved: false });
  });
});

/**
 * An approval never outlives the ask grant it asks under (docs/grants.md#approvals): its `expires`
 * is the earlier of now + ttl_ms and the grant's `expires`, and at that time the call is denied.
 * Through a real core whose clock the test holds (CoreOptions.clock), so no test waits out a grant.
 */
import { denialText } from "../../mod/policy/mod.ts";
import { assertEquals } from "../assert.ts";
import { counter, grant, type Json, pendingApproval, until, withBox } from "../kit/mod.ts";

const NOW = Date.parse("2031-03-01T12:00:00.000Z");
/** The grant expires a minute from NOW; an approval would stay open ten. */
const GRANT_EXPIRES = "2031-03-01T12:01:00.000Z";
const TTL_MS = 10 * 60 * 1000;

Deno.test("an ask grant that expires before ttl_ms: the approval expires with the grant, and the call is denied then, not at ttl_ms", async () => {
  const { runs, tool } = counter();
  let now = NOW;
  await withBox({
    grants: {
      count: grant({ tool: "test.count", mode: "ask", expires: GRANT_EXPIRES }),
    },
    tools: [tool],
    toml: `[approvals]\nttl_ms = ${TTL_MS}\n`,
    core: { clock: () => new Date(now) },
  }, async (box) => {
    const task = await box.startTask({ tools: ["test.count"] });
    const sent = task.send("test.count", { n: 1 }, "k1");
    const id = await pendingApproval(box, task);
    const shown = (await box.admin("GET", "/approvals")).body.items as Json[];
    assertEquals(shown.map((item) => [item.approval, item.created, item.expires]), [
      [id, new Date(NOW).toISOString(), GRANT_EXPIRES],
    ], "the approval's expiry is not the grant's");

    // A millisecond before the grant expires the approval is still open, past an expiry round
    // (the core looks every second at most): nothing is awaited for what must not happen.
    now = Date.parse(GRANT_EXPIRES) - 1;
    await new Promise((resolve) => setTimeout(resolve, 1200));
    assertEquals((await box.admin("GET", "/approvals")).body.items.length, 1);
    assertEquals(sent.answered(), false);

    // At the grant's expiry, nine minutes before ttl_ms, it expires and the call is denied.
    now = Date.parse(GRANT_EXPIRES);
    await until(async () => (await box.admin("GET", "/approvals")).body.items.length === 0);
    assertEquals(await sent.answer, { ok: false, error: denialText("approval_expired") });
    assertEquals(runs.length, 0);
    const approval = (await box.records()).find((r) => r.event.type === "approval");
    assertEquals(
      [approval.event.decision, approval.event.answer, approval.event.outcome],
      [id, "expired", { outcome: "denied", reason: "approval_expired" }],
    );
  });
});

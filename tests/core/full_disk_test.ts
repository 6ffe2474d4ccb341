/**
 * A full disk, as the owner and the task see it, on a box home that is a real 2 MiB tmpfs filled to
 * its last byte: /step is refused 507 disk_full, /cost 503 audit_unavailable once the audit log
 * cannot take its record, calls are denied audit_unavailable (never "failed inside gurt"), a task
 * start is refused and leaves no half-made tasks/<id>/, and a core started on it says which home is
 * full and points at the runbook. Each refusal ends with its runbook pointer.
 */
import { assert, assertEquals } from "../assert.ts";
import { counter, type Json, startBox } from "../kit/mod.ts";
import { canMount, mountSmallDisk } from "../kit/small_disk.ts";

const DENIED = "Denied: the audit log cannot be written; the owner has been told.";

Deno.test({
  name:
    "on a full disk every request is refused with its reason and pointer, and a failed task start leaves nothing",
  ignore: !canMount(),
  fn: async () => {
    const home = await Deno.makeTempDir({ prefix: "gurt-full-" });
    const disk = await mountSmallDisk(home, 2 * 1024 * 1024);
    const count = counter();
    const box = await startBox({ home, ...count.options });
    let closed = false;
    try {
      const task = await box.startTask({ tools: ["test.count"] });
      assertEquals(await task.call("test.count", { n: 0 }, "k0"), {
        ok: true,
        output: { runs: 1 },
      });
      await disk.fill();

      const step = await task.request("POST", "/step", { text: "x".repeat(9000) });
      assertEquals(step.status, 507, JSON.stringify(step.body));
      assertEquals(step.body.code, "disk_full");
      assert(
        step.body.error.startsWith(
          "POST /step could not be written: the box home's disk is full (",
        ),
        step.body.error,
      );
      assert(step.body.error.endsWith("see runbook.md#disk-full"), step.body.error);

      // Steps fill the journal's last page; the audit log's still has room.
      for (let i = 0; i < 200; i++) {
        const small = await task.request("POST", "/step", { text: "y".repeat(40) });
        if (small.status === 507) break;
        assertEquals(small.status, 200);
      }
      // An ask whose Decision record is written but whose journal line cannot be is refused.
      const ask = await task.request("POST", "/ask", { question: "q", key: "full", waitMs: 0 });
      assertEquals(ask, { status: 200, body: { approved: false } });
      // A call whose Decision record is written but whose journal line cannot be is denied
      // audit_unavailable, not "failed inside gurt"; later ones are denied at their record.
      const answers: Json[] = [];
      for (let n = 1; n <= 200; n++) {
        const answer = await task.call("test.count", { n }, `k${n}`);
        answers.push(answer);
        if (answer.ok !== true) break;
      }
      const last = answers[answers.length - 1];
      assertEquals(last, { ok: false, error: DENIED }, JSON.stringify(answers.slice(-3)));

      // Costs: the journal refuses them (507) until the audit log cannot take their record (503).
      let cost: Json = null;
      for (let i = 0; i < 200; i++) {
        cost = await task.request("POST", "/cost", { cents: 1, what: "x".repeat(200) });
        if (cost.status === 200) continue;
        const ends = cost.status === 507
          ? "see runbook.md#disk-full"
          : "see runbook.md#audit-unavailable";
        assertEquals(cost.body.code, cost.status === 507 ? "disk_full" : "audit_unavailable");
        assert(cost.body.error.endsWith(ends), cost.body.error);
        if (cost.status === 503) break;
      }
      assertEquals(cost.status, 503, JSON.stringify(cost.body));
      assertEquals(await task.call("test.count", { n: 999 }, "later"), {
        ok: false,
        error: DENIED,
      });

      const before = [...Deno.readDirSync(`${home}/tasks`)].map((e) => e.name).sort();
      const start = await box.admin("POST", "/tasks", {
        worker: { kind: "none" },
        tools: ["test.count"],
        budgetCents: null,
      });
      assert([503, 507].includes(start.status), JSON.stringify(start));
      assert(
        /see runbook\.md#(audit-unavailable|disk-full)$/.test(start.body.error),
        start.body.error,
      );
      assertEquals([...Deno.readDirSync(`${home}/tasks`)].map((e) => e.name).sort(), before);
      assert(!box.logs.some((line) => line.includes("failed inside")), box.logs.join("\n"));

      // A core started on the full disk names the home and the runbook's entry.
      closed = true; // restart closes it first
      let said = "";
      await box.restart().then(() => (closed = false), (error) => (said = error.message));
      assert(said.startsWith(`gurt serve cannot start: the box home ${home} has no room`), said);
      assert(said.endsWith("see runbook.md#disk-full"), said);
    } finally {
      if (!closed) await box.core.close();
      await disk.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});

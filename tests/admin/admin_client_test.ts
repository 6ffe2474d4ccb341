/**
 * The one admin client against a real core: every answer it reads passes its schema in
 * admin_schemas.ts (a schema that drifted from what the core answers fails here); a refusal is a
 * value with the core's sentence; an answer of another shape, or no core at all, is thrown with
 * its runbook pointer.
 */
import { AdminAnswerError, AdminClient, CoreUnreachableError } from "../../mod/admin/mod.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { serveSocket } from "../../mod/core/home_layout.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, pendingApproval, withBox, withHome } from "../kit/mod.ts";

function value<T>(answer: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!answer.ok) throw new Error(`the core refused: ${answer.error}`);
  return answer.value;
}

Deno.test("every answer of a real core passes its schema: approvals, tasks, journal, grants, vault", async () => {
  await withBox({ grants: { echo: grant({ tool: "example.echo", mode: "ask" }) } }, async (box) => {
    const admin = new AdminClient(adminSocketPath(box.home));
    const task = await box.startTask();
    const call = task.call("example.echo", { text: "hello" }, "k1");
    const id = await pendingApproval(box, task);
    const items = value(await admin.approvals()).items;
    assertEquals(items.map((item) => [item.approval, item.task, item.kind]), [[
      id,
      task.id,
      "grant",
    ]]);
    assertEquals(value(await admin.approve(id, { by: "a test" })).outcome, { outcome: "allowed" });
    assertEquals((await call).output, { text: "hello" });

    const second = task.call("example.echo", { text: "again" }, "k2");
    const refusedId = await pendingApproval(box, task);
    const refused = value(await admin.refuse(refusedId, { reason: "no" })).outcome;
    assertEquals(refused, { outcome: "denied", reason: "approval_refused" });
    assertEquals((await second).ok, false);

    const listed = value(await admin.tasks()).tasks;
    assertEquals(listed.map((shown) => [shown.id, shown.state]), [[task.id, "running"]]);
    const shown = value(await admin.task(task.id));
    assertEquals(shown.task.id, task.id);
    assert(shown.journal.some((line) => line.type === "tool.result"), "no tool.result line");
    const page = value(await admin.journal(task.id, { after: 0, waitMs: 0 }));
    assertEquals(page.lines.length, shown.journal.length);
    const started = value(await admin.startTask({ worker: { kind: "none" }, prompt: "p" })).task;
    assertEquals(started.state, "running");
    assertEquals(value(await admin.stopTask(started.id, { reason: "done" })).task.state, "stopped");
    assertEquals(value(await admin.grantsCheck()).problems, []);

    assertEquals(value(await admin.vaultKeys()).keys, []);
    value(await admin.setKey("NOTES_TOKEN", "not-a-real-value"));
    value(await admin.setKeyUse("NOTES_TOKEN", { app: "example", denied: true }));
    const keys = value(await admin.vaultKeys()).keys;
    assertEquals(keys.map((key) => [key.name, key.denied_apps]), [["NOTES_TOKEN", ["example"]]]);
    value(await admin.setKeyUse("NOTES_TOKEN", { app: "example", denied: false }));
    value(await admin.removeKey("NOTES_TOKEN"));
  });
});

Deno.test("the views of the owner's pages: grants, the audit log and its pages, a task's records, approval changes", async () => {
  await withBox({ grants: { echo: grant({ tool: "example.echo", mode: "ask" }) } }, async (box) => {
    const admin = new AdminClient(adminSocketPath(box.home));
    await box.writeGrant("broken", 'tool = "example.echo"\nmode = "sometimes"\n');
    const grants = value(await admin.grants());
    assertEquals(grants.grants.map((shown) => [shown.id, shown.ok]), [["broken", false], [
      "echo",
      true,
    ]]);
    assert(grants.problems.length > 0, "the set is invalid");
    await box.removeGrant("broken");

    const { version } = value(await admin.approvalChanges(999_999, { waitMs: 0 }));
    const task = await box.startTask();
    const waiting = admin.approvalChanges(version, { waitMs: 30_000 });
    const call = task.call("example.echo", { text: "hello" }, "k1");
    assert(value(await waiting).version > version, "the poll answered the change");
    const id = await pendingApproval(box, task);
    value(await admin.refuse(id));
    await call;

    const audit = value(await admin.audit());
    const records = await box.records();
    assertEquals([audit.ok, audit.records, audit.next_seq], [true, records.length, records.length]);
    assertEquals(audit.checkpoint?.split(" ")[0], String(records.length - 1));
    const newest = value(await admin.auditRecords({ limit: 2 })).records;
    assertEquals(newest.map((record) => record.seq), [records.length - 2, records.length - 1]);
    const first = value(await admin.auditRecords({ from: 0, limit: 1 }));
    assertEquals([first.records[0].seq, first.next_seq], [0, records.length]);
    const tooMany = await admin.auditRecords({ limit: 201 });
    assertEquals(tooMany.ok, false);
    const named = value(await admin.taskRecords(task.id)).records;
    assertEquals(
      named.map((record) => record.event.type),
      records.filter((record) => record.event.task === task.id).map((record) => record.event.type),
    );
    assert(named.length > 0, "task_started names the task");
  });
});

Deno.test("a refusal is a value carrying the core's sentence and code", async () => {
  await withBox({}, async (box) => {
    const admin = new AdminClient(adminSocketPath(box.home));
    const gone = await admin.approve(999);
    assertEquals(gone.ok ? null : [gone.status, gone.code], [404, "no_such_approval"]);
    assertStringIncludes(gone.ok ? "" : gone.error, "999: no such approval");
    const unknown = await admin.task("nosuchtask");
    assertEquals(unknown.ok, false);
  });
});

Deno.test("an answer that is not what the schema says is thrown, naming the field and the runbook", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gurt-admin-" });
  const socket = `${dir}/admin.sock`;
  const server = await serveSocket(
    socket,
    () => Response.json({ items: [{ approval: "41", task: "t" }] }),
  );
  try {
    let error: unknown = null;
    try {
      await new AdminClient(socket).approvals();
    } catch (caught) {
      error = caught;
    }
    assert(error instanceof AdminAnswerError, `not an AdminAnswerError: ${error}`);
    assertStringIncludes(error.message, "GET /approvals");
    assertStringIncludes(error.message, "items.0.approval");
    assertStringIncludes(error.message, "see runbook.md#admin-answer-invalid");
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("no core on the socket is CoreUnreachableError with its runbook pointer", async () => {
  await withHome(async (dir) => {
    let error: unknown = null;
    try {
      await new AdminClient(`${dir}/admin.sock`).tasks();
    } catch (caught) {
      error = caught;
    }
    assert(error instanceof CoreUnreachableError, `not a CoreUnreachableError: ${error}`);
    assertStringIncludes(error.message, "see runbook.md#serve-unreachable");
  }, { prefix: "gurt-admin-" });
});

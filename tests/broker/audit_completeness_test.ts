/**
 * Every call is in the audit log (docs/audit.md#decision-a-call-or-an-ask-decided): a call to a
 * tool outside the task's list, or to a name no tool has, is decided no_grant with its Decision
 * record before it is answered; a grants_invalid Decision records the session state as the file
 * says it; a refusal whose Approval record cannot be written keeps no answer for the key, since the
 * log lacks it; a request of the wrong kind, or of no kind, on either socket is 403 forbidden; a
 * Decision record keeps the arguments as received.
 */
import { AdminClient } from "../../mod/admin/mod.ts";
import { realFileOps } from "../../mod/audit/mod.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { answerText } from "../../mod/owner-text/mod.ts";
import { denialText } from "../../mod/policy/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import {
  counter,
  grant,
  gurt,
  parseResponse,
  pendingApproval,
  requestBytes,
  sendBytes,
  startBox,
  until,
  withBox,
} from "../kit/mod.ts";

Deno.test("a call to a tool outside the task's list, or to a made-up name, is a no_grant Decision record before its answer, runs nothing, and its key keeps that answer", async () => {
  const { runs, options } = counter();
  await withBox(options, async (box) => {
    const task = await box.startTask({ tools: ["example.echo"] });
    // Each is told the tool is not one of its tools; the record says no_grant.
    const notListed = (tool: string) => ({
      ok: false,
      error:
        `Denied: "${tool}" is not one of this task's tools (its tools: example.echo); the owner chooses them with gurt task start --tools.`,
    });
    assertEquals(await task.call("test.count", { n: 1 }, "probe-1"), notListed("test.count"));
    assertEquals(await task.call("shell", { command: "id" }, "probe-2"), notListed("shell"));
    assertEquals(await task.call("no.such_tool", { x: 1 }, "probe-3"), notListed("no.such_tool"));
    assertEquals(runs.length, 0);
    const decisions = (await box.records()).filter((r) => r.event.type === "decision");
    assertEquals(
      decisions.map((r) => [r.event.call, r.event.tool, r.event.outcome, r.event.taint]),
      [
        ["probe-1", "test.count", { outcome: "denied", reason: "no_grant" }, "private"],
        ["probe-2", "shell", { outcome: "denied", reason: "no_grant" }, "private"],
        ["probe-3", "no.such_tool", { outcome: "denied", reason: "no_grant" }, "private"],
      ],
    );
    // Asked again with the same key: the same answer, and no second record.
    assertEquals(await task.call("no.such_tool", { x: 1 }, "probe-3"), notListed("no.such_tool"));
    assertEquals((await box.records()).filter((r) => r.event.type === "decision").length, 3);
  });
});

Deno.test("a grants_invalid Decision records the task's taint and untrusted flag as its state file says, not the most restrictive", async () => {
  const { runs, options } = counter();
  await withBox(options, async (box) => {
    const task = await box.startTask({ tools: ["test.count"] });
    assertEquals((await task.call("test.count", { n: 1 }, "k1")).ok, true);
    await Deno.writeTextFile(`${box.home}/grants/broken.toml`, "tool = \n");
    assertEquals(await task.call("test.count", { n: 2 }, "k2"), {
      ok: false,
      error: denialText("grants_invalid"),
    });
    assertEquals(runs.length, 1);
    const last = (await box.records()).filter((r) => r.event.type === "decision").at(-1);
    assertEquals(
      [last.event.outcome, last.event.taint, last.event.untrusted],
      [{ outcome: "denied", reason: "grants_invalid" }, "private", false],
    );
  });
});

Deno.test("a refusal whose Approval record cannot be written answers audit_unavailable and keeps no answer for the key: after a restart the same call and the same /ask are asked afresh", async () => {
  const { runs, tool } = counter();
  let failWrites = false;
  const box = await startBox({
    grants: { count: grant({ tool: "test.count", mode: "ask" }) },
    tools: [tool],
    fileOps: {
      async write(file, bytes) {
        if (failWrites) throw new Error("disk full (test)");
        await realFileOps.write(file, bytes);
      },
    },
  });
  try {
    const task = await box.startTask({ tools: ["test.count"] });
    const call = task.call("test.count", { n: 1 }, "k1");
    const callApproval = await pendingApproval(box, task);
    const ask = task.request("POST", "/ask", { question: "May I?", key: "a1" });
    await until(async () => (await box.admin("GET", "/approvals")).body.items.length === 2);
    const askApproval = (await box.admin("GET", "/approvals")).body.items
      .find((item: { kind: string }) => item.kind === "ask").approval;
    failWrites = true;
    const admin = new AdminClient(adminSocketPath(box.home));
    for (const id of [callApproval, askApproval]) {
      const refused = await admin.refuse(id);
      assertEquals(refused.ok ? null : [refused.status, refused.code], [503, "audit_unavailable"]);
      // The CLI says the id once.
      const shown = answerText(refused, { id, action: "refuse" });
      assertEquals(shown.text.startsWith(`${id}: the answer could not be written`), true);
    }
    assertEquals(await call, { ok: false, error: denialText("audit_unavailable") });
    assertEquals((await ask).body, { approved: false });
    const journal = await Deno.readTextFile(`${box.home}/tasks/${task.id}/journal.jsonl`);
    const kept = journal.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line))
      .filter((line) => line.type === "tool.result" || line.type === "ask.answer");
    assertEquals(kept, []);

    failWrites = false;
    await box.restart();
    const before = (await box.records()).length;
    const again = task.call("test.count", { n: 1 }, "k1");
    const askAgain = task.request("POST", "/ask", { question: "May I?", key: "a1" });
    await until(async () => (await box.admin("GET", "/approvals")).body.items.length === 2);
    const decisions = (await box.records()).slice(before).filter((r) =>
      r.event.type === "decision"
    );
    assertEquals(decisions.map((r) => r.event.call).sort(), ["a1", "k1"]);
    for (const item of (await box.admin("GET", "/approvals")).body.items) {
      await box.admin("POST", `/approvals/${item.approval}/refuse`);
    }
    assertEquals(await again, { ok: false, error: denialText("approval_refused") });
    assertEquals((await askAgain).body, { approved: false });
    assertEquals(runs.length, 0);
  } finally {
    await box.close();
  }
});

Deno.test("a request of another socket's kind, or of no kind, is 403 forbidden on either socket, telling the client to close the connection", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    const admin = `${box.home}/run/owner-broker/admin.sock`;
    for (
      const [socket, path] of [
        [task.socket, "/approvals"],
        [task.socket, "/no/such/thing"],
        [admin, "/no/such/thing"],
        [admin, "/call"],
      ]
    ) {
      const text = await sendBytes(socket, requestBytes({ method: "GET", path }));
      const answer = parseResponse(text);
      assertEquals([answer.status, answer.body.code], [403, "forbidden"], text);
      // Deno.serve gives a handler no way to close its own connection (denoland/deno#9411); the
      // answer says close, which clients honour.
      assert(/^connection: close\r$/im.test(text), text);
      assert(box.logs.some((line) => line.includes(`refused GET ${path} on ${socket}`)));
    }
  });
});

Deno.test("a Decision record keeps the call's arguments exactly as the task sent them, escapes, spacing and order included", async () => {
  await withBox({ grants: { echo: grant({ tool: "example.echo" }) } }, async (box) => {
    const task = await box.startTask();
    const raw = '{ "text" : "\\u002fetc é" }';
    const text = `{"tool":"example.echo","input":${raw},"key":"raw-1"}`;
    const answer = parseResponse(
      await sendBytes(task.socket, requestBytes({ method: "POST", path: "/call", body: text })),
    );
    assertEquals([answer.status, answer.body.ok], [200, true], answer.text);
    const decision = (await box.records()).find((r) => r.event.type === "decision");
    assertEquals(decision.event.arguments, raw);
  });
});

Deno.test("arguments that hold a vault value, even spelled with JSON escapes, are recorded serialised again and redacted", async () => {
  const secret = "sk-test-0123456789abcdef";
  await withBox({ grants: { echo: grant({ tool: "example.echo" }) } }, async (box) => {
    await Deno.writeTextFile(`${box.home}/vault.env`, `OPENAI_API_KEY=${secret}\n`);
    await box.restart();
    const task = await box.startTask();
    const escaped = [...secret].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`)
      .join("");
    const text = `{"tool":"example.echo","input":{"text":"${escaped}"},"key":"s-1"}`;
    await sendBytes(task.socket, requestBytes({ method: "POST", path: "/call", body: text }));
    const decision = (await box.records()).find((r) => r.event.type === "decision");
    assertEquals(decision.event.arguments, '{"text":"[a vault key]"}');
    const log = await Array.fromAsync(Deno.readDir(`${box.home}/audit`));
    for (const file of log.filter((entry) => entry.name.endsWith(".jsonl"))) {
      const written = await Deno.readTextFile(`${box.home}/audit/${file.name}`);
      assertEquals(written.includes(secret) || written.includes(escaped), false);
    }
  });
});

Deno.test("gurt audit verify on the log of a run with probes, refusals and invalid grants counts every call, each with its Decision record and none left open", async () => {
  const box = await startBox({
    grants: {
      echo: grant({ tool: "example.echo" }),
      spend: grant({ tool: "example.spend", mode: "ask" }),
    },
  });
  try {
    const task = await box.startTask({ tools: ["example.echo", "example.spend"] });
    const keys: string[] = [];
    const call = (tool: string, input: unknown, key: string) => {
      keys.push(key);
      return task.call(tool, input, key);
    };
    assertEquals((await call("example.echo", { text: "hi" }, "ok-1")).ok, true);
    await call("shell", { command: "id" }, "probe-unlisted");
    await call("made.up", {}, "probe-made-up");
    await call("example.echo", { nope: 1 }, "probe-invalid");
    const spend = call("example.spend", { cents: 5, payee: "ACME" }, "refused-1");
    await box.admin("POST", `/approvals/${await pendingApproval(box, task)}/refuse`);
    await spend;
    await box.writeGrant("broken", "tool = \n");
    await call("example.echo", { text: "again" }, "grants-invalid");
    await box.removeGrant("broken");

    const { code, stdout, stderr } = await gurt(["--home", box.home, "audit", "verify"]);
    assertEquals(code, 0, stderr);
    const records = await box.records();
    const lines = stdout.trimEnd().split("\n");
    assertEquals(lines[0].startsWith(`audit: ok, ${records.length} records, head `), true, stdout);
    // Nothing open: every ask was answered, every allowed call has its Result.
    assertEquals(lines.slice(1), []);
    const decided = records.filter((r) => r.event.type === "decision").map((r) => r.event.call);
    assertEquals(decided, keys);
  } finally {
    await box.close();
  }
});

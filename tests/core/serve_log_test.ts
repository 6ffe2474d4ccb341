/**
 * What a task sends reaches `gurt serve`'s log escaped, and held to a few lines: a refused path
 * with %1b and %0a in it is one line with \u001b and \n in its place (it cannot forge
 * "gurt serve: stopped"), and a flood of refusals on the task's real socket logs at most the task's
 * 20 lines a window, then the count of what was dropped.
 */
import { assert, assertEquals } from "../assert.ts";
import { counter, startBox } from "../kit/mod.ts";
import { requestRaw } from "../../mod/net/mod.ts";
import { realFileOps } from "../../mod/audit/mod.ts";

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

Deno.test("a refused path's ESC and newline reach the core's log escaped, one line that forges nothing", async () => {
  const box = await startBox();
  try {
    const task = await box.startTask();
    const path = "/x%1b[2J%0agurt%20serve:%20stopped%0d%e2%80%a8";
    const answer = await requestRaw(task.socket, { method: "GET", path });
    assertEquals(answer.status, 403);
    const refused = box.logs.filter((line) => line.includes("refused GET"));
    assertEquals(refused.length, 1, box.logs.join("\n"));
    for (const line of box.logs) assert(!CONTROL.test(line), JSON.stringify(line));
    assert(refused[0].includes("\\u001b[2J\\ngurt serve: stopped\\r\\u2028"), refused[0]);
    assert(refused[0].startsWith("gurt: refused GET /x"), refused[0]);
  } finally {
    await box.close();
  }
});

Deno.test("a task's flood of refusals logs its 20 lines a window, then how many were dropped", async () => {
  let now = Date.parse("2026-12-03T12:00:00Z");
  const box = await startBox({ core: { clock: () => new Date(now) } });
  try {
    const task = await box.startTask();
    const before = box.logs.length;
    for (let i = 0; i < 300; i++) {
      const answer = await requestRaw(task.socket, { method: "GET", path: `/flood/${i}` });
      assertEquals(answer.status, 403);
    }
    const flood = box.logs.slice(before);
    assertEquals(flood.length, 20, flood.join("\n"));
    assert(flood.every((line) => line.startsWith("gurt: refused GET /flood/")));
    // The next window: the count first, then the line.
    now += 10_000;
    await requestRaw(task.socket, { method: "GET", path: "/flood/last" });
    assertEquals(box.logs.slice(before + 20), [
      `gurt: task ${task.id}: 280 more lines of this task were not logged (at most 20 every 10 s); see runbook.md#task-log-limit`,
      `gurt: refused GET /flood/last on ${task.socket}; see runbook.md#socket-forbidden`,
    ]);
    // Dropped lines at the task's end are counted then.
    for (let i = 0; i < 25; i++) await requestRaw(task.socket, { method: "GET", path: "/again" });
    assertEquals((await box.admin("POST", `/tasks/${task.id}/stop`)).status, 200);
    assert(
      box.logs.includes(
        `gurt: task ${task.id}: 6 more lines of this task were not logged (at most 20 every 10 s); see runbook.md#task-log-limit`,
      ),
      box.logs.slice(-5).join("\n"),
    );
  } finally {
    await box.close();
  }
});

Deno.test("the box's own notices are logged whichever task's call finds them: a flooding task cannot swallow the grants-invalid report", async () => {
  const count = counter();
  const box = await startBox(count.options);
  try {
    const flooder = await box.startTask({ tools: ["test.count"] });
    const other = await box.startTask({ tools: ["test.count"] });
    for (let i = 0; i < 30; i++) {
      await requestRaw(flooder.socket, { method: "GET", path: `/flood/${i}` });
    }
    // The owner's grant files break; the flooder's call is the first to read them.
    await Deno.writeTextFile(`${box.home}/grants/broken.toml`, "tool = \n");
    assertEquals((await flooder.call("test.count", { n: 1 }, "k1")).ok, false);
    assertEquals((await other.call("test.count", { n: 2 }, "k2")).ok, false);
    assert(
      box.logs.some((line) => line.includes("the grant files are invalid")),
      box.logs.slice(-5).join("\n"),
    );
  } finally {
    await box.close();
  }
});

Deno.test("a task's long line is cut after the vault's values are redacted, so no part of one is printed", async () => {
  const secret = "sk-test-0123456789abcdef";
  const box = await startBox();
  try {
    await Deno.writeTextFile(`${box.home}/vault.env`, `OPENAI_API_KEY=${secret}\n`);
    await box.restart();
    const task = await box.startTask();
    // "gurt: refused GET /" is 19 characters: the value begins at 990 and the cut comes at 1000.
    const path = `/${"x".repeat(971)}${secret}`;
    assertEquals((await requestRaw(task.socket, { method: "GET", path })).status, 403);
    const refused = box.logs.filter((line) => line.includes("refused GET"));
    assertEquals(refused.length, 1, box.logs.join("\n"));
    assert(!refused[0].includes(secret.slice(0, 8)), refused[0].slice(980));
  } finally {
    await box.close();
  }
});

Deno.test("the audit log's failure reaches the core's log once, whichever task's call met it first", async () => {
  const count = counter();
  let failWrites = false;
  const box = await startBox({
    ...count.options,
    fileOps: {
      async write(file, bytes) {
        if (failWrites) throw new Error("disk full (test)");
        await realFileOps.write(file, bytes);
      },
    },
  });
  try {
    const flooder = await box.startTask({ tools: ["test.count"] });
    for (let i = 0; i < 30; i++) {
      await requestRaw(flooder.socket, { method: "GET", path: `/flood/${i}` });
    }
    failWrites = true;
    for (let i = 0; i < 5; i++) await flooder.call("test.count", { n: i }, `k${i}`);
    const said = box.logs.filter((line) => line.includes("disk full (test)"));
    assertEquals(said.length, 1, box.logs.slice(-5).join("\n"));
    assert(said[0].includes("see runbook.md#audit-unavailable"), said[0]);
  } finally {
    await box.close();
  }
});

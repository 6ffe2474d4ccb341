/**
 * An app that fails (tests/apps/hostile_server.js): one that crashes on a call fails it with the
 * fixed sentence, fails fast while it pauses and answers again after; one that hangs fails the
 * call at [apps] call_timeout_ms, is stopped, and starts again at the next call; one that writes
 * garbage on stdout, or one endless line, ends with an error that says so; one that floods stderr
 * keeps apps/<name>/app.log within its cap, its vault values redacted.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type Json, waitFor } from "../kit/mod.ts";
import { type AppBox, type AppBoxTables, startAppBox } from "./app_kit.ts";
import { addHostile, pidsWith, probe } from "./hostile_kit.ts";

const ready = Deno.uid() === 0 && await Deno.stat("/usr/bin/node").then(() => true, () => false);

async function withBox(tables: AppBoxTables, fn: (box: AppBox) => Promise<void>): Promise<void> {
  const box = await startAppBox("", tables);
  try {
    await fn(box);
  } finally {
    await box.close();
  }
}

/**
 * How many times the app's server has started (each start writes a line in its home), read while
 * it runs: as root its home is an image mounted only then.
 */
async function starts(box: AppBox, app: string): Promise<number> {
  const text = await Deno.readTextFile(`${box.home}/apps/${app}/home/starts`).catch(() => "");
  return text.split("\n").filter((line) => line !== "").length;
}

async function detail(box: AppBox, app: string): Promise<Json> {
  const shown = await box.admin("GET", `/apps/${app}`);
  assertEquals(shown.status, 200, JSON.stringify(shown.body));
  return shown.body.app;
}

/** Calls `tool` until it answers (a paused app starts again once its pause is over). */
function answered(box: AppBox, task: string, tool: string): Promise<Json> {
  return waitFor(async () => {
    const answer = await box.call(task, tool, { again: true });
    return answer.body.ok === true ? answer.body : null;
  }, { ms: 15_000, every: 200, what: `${tool} to answer again` });
}

const SHORT = { apps: "call_timeout_ms = 2000" };

Deno.test({
  name:
    "a server that exits on a call fails it with the fixed sentence, fails fast while paused, and answers after the pause",
  ignore: !ready,
  fn: () =>
    withBox(SHORT, async (box) => {
      const evil = await addHostile(box, "evil");
      const task = await box.task(["evil.*"]);
      const before = await starts(box, "evil");
      const crashed = await box.call(task, "evil.crash", {});
      assertEquals(crashed.body.ok, false, JSON.stringify(crashed.body));
      assertStringIncludes(crashed.body.error, "the app evil is not running");
      assertStringIncludes(crashed.body.error, "exited with status 3");
      assertStringIncludes(crashed.body.error, "see runbook.md#app-not-running");
      assert(!crashed.body.error.includes("did not answer within"), crashed.body.error);
      const paused = await detail(box, "evil");
      assertEquals(paused.state, "paused");
      const until = Date.parse(paused.paused_until);
      const during = await box.call(task, "evil.echo", {});
      if (Date.now() < until) {
        // Inside the pause: refused at once, nothing started.
        assertEquals(during.body.ok, false, JSON.stringify(during.body));
        assertStringIncludes(during.body.error, "it starts again at a call in");
        assertEquals(await pidsWith(evil.marker), []);
      }
      await answered(box, task, "evil.echo");
      assertEquals(await starts(box, "evil"), before + 1);
    }),
});

Deno.test({
  name:
    "a server that never answers a call fails it at call_timeout_ms, is stopped, and starts again at the next call",
  ignore: !ready,
  fn: () =>
    withBox(SHORT, async (box) => {
      const evil = await addHostile(box, "evil");
      const task = await box.task(["evil.*"]);
      assertEquals(await probe(box, task, "evil.echo", { n: 1 }), { echo: { n: 1 } });
      const before = await starts(box, "evil");
      const hung = await box.call(task, "evil.hang", {});
      assertEquals(hung.body.ok, false, JSON.stringify(hung.body));
      assertStringIncludes(
        hung.body.error,
        "the app evil did not answer within 2000 ms; it was stopped",
      );
      assertStringIncludes(hung.body.error, "see runbook.md#app-not-answering");
      assertEquals(await pidsWith(evil.marker), [], "the hung server still runs");
      assertEquals(await probe(box, task, "evil.echo", { n: 2 }), { echo: { n: 2 } });
      assertEquals(await starts(box, "evil"), before + 1);
    }),
});

Deno.test({
  name: "a server that writes garbage on stdout ends with an error that says so, and starts again",
  ignore: !ready,
  fn: () =>
    withBox({}, async (box) => {
      const evil = await addHostile(box, "evil");
      const task = await box.task(["evil.*"]);
      const broken = await box.call(task, "evil.garbage", {});
      assertEquals(broken.body.ok, false, JSON.stringify(broken.body));
      assertStringIncludes(broken.body.error, "the app evil is not running");
      assertStringIncludes(broken.body.error, "not an MCP message");
      assertEquals(await pidsWith(evil.marker), []);
      assertStringIncludes((await detail(box, "evil")).last_error, "not an MCP message");
      await answered(box, task, "evil.echo");
    }),
});

Deno.test({
  name: "a server that writes one endless line on stdout is cut at the line bound",
  ignore: !ready,
  fn: () =>
    withBox({}, async (box) => {
      const evil = await addHostile(box, "evil");
      const task = await box.task(["evil.*"]);
      const flooded = await box.call(task, "evil.flood_stdout", {});
      assertEquals(flooded.body.ok, false, JSON.stringify(flooded.body));
      assertStringIncludes(flooded.body.error, "a line on stdout longer than 16777216 bytes");
      assertEquals(await pidsWith(evil.marker), []);
      await answered(box, task, "evil.echo");
    }),
});

const FLOOD_VALUE = "sk-flood-key-0123456789abcdef";
const LOG_CAP = 65536;

Deno.test({
  name: "a server that floods stderr keeps app.log within [tasks] worker_log_bytes, redacted",
  ignore: !ready,
  fn: () =>
    withBox({ tasks: `worker_log_bytes = ${LOG_CAP}` }, async (box) => {
      await box.setKey("FLOOD_KEY", FLOOD_VALUE);
      await addHostile(box, "evil", { extra: ["[secrets.FLOOD_KEY]", 'env = "FLOOD_KEY"'] });
      const task = await box.task(["evil.*"]);
      const lines = 20000;
      const flooded = await probe(box, task, "evil.flood_stderr", { env: "FLOOD_KEY", lines });
      assertEquals(flooded, { flooded: true });
      const log = `${box.home}/apps/evil/app.log`;
      const text = await waitFor(async () => {
        const text = await Deno.readTextFile(log);
        return text.includes("flood done") ? text : null;
      }, { ms: 15_000, what: "the flood's last line in app.log" });
      // More than 4 MB was written; the log holds its cap at most.
      assert(lines * 200 > 60 * LOG_CAP);
      assert((await Deno.stat(log)).size <= LOG_CAP, `app.log is ${(await Deno.stat(log)).size}`);
      assert(/\[gurt: \d+ bytes of worker output dropped\]/.test(text));
      assert(!text.includes(FLOOD_VALUE), "a vault value reached app.log");
      assertStringIncludes(text, "flood [a vault key] eee");
    }),
});

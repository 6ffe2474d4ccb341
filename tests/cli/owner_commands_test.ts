/**
 * The owner's commands as child processes (the real main.ts) against a real core: `gurt approvals`
 * (its two-line block, escaped: docs/grants.md#approvals), `gurt approve`, `gurt refuse` and `gurt
 * task …`.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";

function assertMatch(text: string, pattern: RegExp): void {
  assert(pattern.test(text), `${JSON.stringify(text)} does not match ${pattern}`);
}
import {
  grant,
  gurt,
  requestBytes,
  sendBytes,
  startBox,
  type TestBox,
  until,
  withBox,
} from "../kit/mod.ts";

const ASK_SPEND = { spend: grant({ tool: "example.spend", mode: "ask" }) };

function run(box: TestBox, args: string[]) {
  return gurt(["--home", box.home, ...args]);
}

/** Sends a /call whose body is the given JSON text exactly as written; the answer comes later. */
function rawCall(socket: string, text: string): Promise<string> {
  return sendBytes(socket, requestBytes({ method: "POST", path: "/call", body: text }));
}

async function pendingCount(box: TestBox): Promise<number> {
  return (await box.admin("GET", "/approvals")).body.items.length;
}

Deno.test("gurt approvals prints the two-line block with control, invisible and direction characters escaped, and \\u002fetc as /etc", async () => {
  await withBox({ grants: ASK_SPEND }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend"] });
    // The JSON text below is sent as written: \u001b is an escape character once parsed, and the
    // other three are the raw characters U+202E, U+200B and U+2066.
    const tricky =
      String.raw`{"tool":"example.spend","input":{"cents":3,"payee":"\u001b[31mred\u001b[2J` +
      "\u202e\u200b\u2066" + String.raw`gpj.exe"},"key":"k1"}`;
    const slash = String
      .raw`{"tool":"example.spend","input":{"cents":4,"payee":"\u002fetc"},"key":"k2"}`;
    // One after the other, so the first has the lower approval id.
    const answers = [rawCall(task.socket, tricky)];
    await until(async () => (await pendingCount(box)) === 1);
    answers.push(rawCall(task.socket, slash));
    await until(async () => (await pendingCount(box)) === 2);

    const shown = await run(box, ["approvals"]);
    assertEquals(shown.code, 0, shown.stderr);
    const lines = shown.stdout.split("\n").filter((l) => l !== "");
    assertEquals(lines.length, 4, shown.stdout);
    const ids = (await box.admin("GET", "/approvals")).body.items.map((i: { approval: number }) =>
      i.approval
    ).sort((a: number, b: number) => a - b);
    assertMatch(
      lines[0],
      new RegExp(
        `^${
          ids[0]
        }  just now  expires in 1[45] min  task ${task.id}  grant spend  cost \\$0\\.03  taint private$`,
      ),
    );
    assertEquals(
      lines[1],
      String
        .raw`    example.spend {"cents":3,"payee":"\u001b[31mred\u001b[2J\u202e\u200b\u2066gpj.exe"}`,
    );
    assertMatch(lines[2], new RegExp(`^${ids[1]}  just now  .*cost \\$0\\.04  taint private$`));
    assertEquals(lines[3], `    example.spend {"cents":4,"payee":"/etc"}`);
    for (const char of ["\u001b", "\u202e", "\u200b", "\u2066"]) {
      assert(
        !shown.stdout.includes(char),
        `a raw U+${char.charCodeAt(0).toString(16)} was printed`,
      );
    }
    for (const id of ids) await box.admin("POST", `/approvals/${id}/refuse`);
    await Promise.all(answers);
  });
});

Deno.test("gurt approve: runs (exit 0), denied with its reason (exit 1), no such approval (exit 1)", async () => {
  await withBox({
    grants: { ...ASK_SPEND, echo: grant({ tool: "example.echo", mode: "ask" }) },
  }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend", "example.echo"] });
    const spend = task.call("example.spend", { cents: 2 }, "k1");
    await until(async () => (await pendingCount(box)) === 1);
    const first = (await box.admin("GET", "/approvals")).body.items[0].approval;
    const approved = await run(box, ["approve", String(first)]);
    assertEquals([approved.code, approved.stdout], [0, `approved ${first}: runs\n`]);
    assertEquals((await spend).ok, true);

    const echo = task.call("example.echo", { text: "hi" }, "k2");
    await until(async () => (await pendingCount(box)) === 1);
    const second = (await box.admin("GET", "/approvals")).body.items[0].approval;
    await box.removeGrant("echo");
    const denied = await run(box, ["approve", String(second)]);
    assertEquals([denied.code, denied.stdout], [1, `approved ${second}: denied (no_grant)\n`]);
    assertEquals((await echo).ok, false);

    const missing = await run(box, ["approve", String(second)]);
    assertEquals(missing.code, 1);
    assertEquals(
      missing.stdout,
      `${second}: no such approval (already answered or expired, or dropped when gurt serve stopped: approvals wait only while it runs)\n`,
    );
    const notAnId = await run(box, ["approve", "41x"]);
    assertEquals(notAnId.code, 1);
    assertStringIncludes(notAnId.stderr, "is not an approval id");
  });
});

Deno.test("gurt refuse: prints refused, exit 0; the call is refused; a second refuse finds nothing", async () => {
  await withBox({ grants: ASK_SPEND }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend"] });
    const spend = task.call("example.spend", { cents: 2 }, "k1");
    await until(async () => (await pendingCount(box)) === 1);
    const id = (await box.admin("GET", "/approvals")).body.items[0].approval;
    const refused = await run(box, ["refuse", String(id), "--reason", "too dear"]);
    assertEquals([refused.code, refused.stdout], [0, `refused ${id}\n`]);
    assertEquals(await spend, { ok: false, error: "Denied: the owner refused this call." });
    const approval = (await box.records()).find((r) => r.event.type === "approval");
    assertEquals([approval.event.answer, approval.event.reason], ["refused", "too dear"]);
    const again = await run(box, ["refuse", String(id)]);
    assertEquals(again.code, 1);
    assertEquals(
      again.stdout,
      `${id}: no such approval (already answered or expired, or dropped when gurt serve stopped: approvals wait only while it runs)\n`,
    );
    // The journal's notices read as words in gurt task show.
    const shown = await run(box, ["task", "show", task.id]);
    assertMatch(
      shown.stdout,
      new RegExp(`approval ${id} is waiting: example\\.spend, until \\d{4}-`),
    );
    assertMatch(shown.stdout, /denied example\.spend: approval_refused\n/);
    assert(!shown.stdout.includes('"type":"event"'), shown.stdout);
  });
});

Deno.test("gurt task start, list, show and stop against a running core", async () => {
  const box = await startBox({ grants: { echo: grant({ tool: "example.echo" }) } });
  const script = `${box.home}/script.txt`;
  await Deno.writeTextFile(script, `POST /call {"tool":"example.echo","input":{"text":"hi"}}\n`);
  try {
    const started = await run(box, [
      "task",
      "start",
      "--worker",
      "test",
      "--script",
      script,
      "--budget",
      "50",
      "say \u202ehi",
    ]);
    assertEquals(started.code, 0, started.stderr);
    const id = started.stdout.trim();
    assertMatch(id, /^[a-z0-9]{1,24}$/);
    await until(async () => (await box.admin("GET", `/tasks/${id}`)).body.task.state === "done");

    const shown = await run(box, ["task", "show", id]);
    assertEquals(shown.code, 0, shown.stderr);
    assertStringIncludes(shown.stdout, `task ${id}: done`);
    assertStringIncludes(shown.stdout, "spent $0.00 of $0.50");
    assertStringIncludes(shown.stdout, "prompt say \\u202ehi");
    assertMatch(shown.stdout, /result line-1 example\.echo \{"ok":true,"output":\{"text":"hi"\}\}/);
    assertMatch(shown.stdout, /step line 1 done/);

    const idle = await run(box, ["task", "start", "--worker", "none", "--tools", "example.echo"]);
    const other = idle.stdout.trim();
    const listed = await run(box, ["task", "list"]);
    assertEquals(listed.code, 0, listed.stderr);
    assertStringIncludes(
      listed.stdout,
      `${id}  done  $0.00 of $0.50  models $0.0000  say \\u202ehi`,
    );
    assertStringIncludes(listed.stdout, `${other}  running  $0.00 of no budget`);

    const stopped = await run(box, ["task", "stop", other]);
    assertEquals([stopped.code, stopped.stdout], [0, `stopped ${other}\n`]);
    assertEquals((await box.admin("GET", `/tasks/${other}`)).body.task.state, "stopped");
    const twice = await run(box, ["task", "stop", other]);
    assertEquals(twice.code, 1);
    assertStringIncludes(twice.stderr, "has already ended");
    const unknown = await run(box, ["task", "show", "nosuchtask"]);
    assertEquals(unknown.code, 1);
    assertStringIncludes(unknown.stderr, "no task nosuchtask");
  } finally {
    await box.close();
  }
});

Deno.test("gurt task show escapes the keys a task chose, in its call and result lines", async () => {
  await withBox({ grants: { echo: grant({ tool: "example.echo" }) } }, async (box) => {
    const task = await box.startTask();
    const key = "k\u001b[2J\u202e1";
    assertEquals((await task.call("example.echo", { text: "hi" }, key)).ok, true);
    const shown = await run(box, ["task", "show", task.id]);
    assertEquals(shown.code, 0, shown.stderr);
    assertMatch(shown.stdout, /call k\\u001b\[2J\\u202e1 example\.echo \{"text":"hi"\}/);
    assertMatch(shown.stdout, /result k\\u001b\[2J\\u202e1 example\.echo /);
    for (const char of ["\u001b", "\u202e"]) assert(!shown.stdout.includes(char), shown.stdout);
  });
});

Deno.test("gurt task start --worker cmd -- COMMAND… runs the command with BOX_SOCKET and BOX_TASK, and the words after -- are not the prompt; without --worker cmd, -- ends the options", async () => {
  await withBox({}, async (box) => {
    // The task sees no folder of the host but its home.
    const script = `printf '%s %s %s' "$BOX_TASK" "$BOX_SOCKET" "$1" > "$HOME/seen.txt"`;
    const withPrompt = await run(box, [
      "task",
      "start",
      "--worker",
      "cmd",
      "look around",
      "--",
      "sh",
      "-c",
      script,
      "sh",
      "an argument",
    ]);
    assertEquals(withPrompt.code, 0, withPrompt.stderr);
    const id = withPrompt.stdout.trim();
    const seen = `${box.home}/tasks/${id}/home/seen.txt`;
    await until(async () => (await Deno.stat(seen).catch(() => null)) !== null);
    await until(async () => (await Deno.readTextFile(seen)).endsWith("an argument"));
    assertEquals(
      await Deno.readTextFile(seen),
      `${id} ${box.home}/tasks/${id}/broker.sock an argument`,
    );
    assertEquals((await box.admin("GET", `/tasks/${id}`)).body.task.prompt, "look around");

    // No prompt: the command's words stay the command.
    const bare = await run(box, ["task", "start", "--worker", "cmd", "--", "sleep", "30"]);
    assertEquals(bare.code, 0, bare.stderr);
    const sleeper = (await box.admin("GET", `/tasks/${bare.stdout.trim()}`)).body.task;
    assertEquals([sleeper.prompt, sleeper.worker], ["", { kind: "cmd", command: ["sleep", "30"] }]);
    await run(box, ["task", "stop", sleeper.id]);

    // Without --worker cmd, -- ends the options as usual: a prompt may begin with "-".
    const dashed = await run(box, ["task", "start", "--worker", "none", "--", "-v says nothing"]);
    assertEquals(dashed.code, 0, dashed.stderr);
    const prompt = (await box.admin("GET", `/tasks/${dashed.stdout.trim()}`)).body.task.prompt;
    assertEquals(prompt, "-v says nothing");
    const extra = await run(box, ["task", "start", "--worker", "none", "--", "sleep", "30"]);
    assertEquals(extra.code, 1);
    assertStringIncludes(extra.stderr, "too many arguments");
    // The last --worker is the one taken: a command after it is not dropped unseen.
    const overridden = await run(box, [
      "task",
      "start",
      "--worker",
      "cmd",
      "--worker",
      "none",
      "--",
      "sleep",
      "30",
    ]);
    assertEquals(overridden.code, 1);
    assertStringIncludes(overridden.stderr, "too many arguments");
    const missing = await run(box, ["task", "start", "--worker", "cmd"]);
    assertEquals(missing.code, 1);
    assertStringIncludes(missing.stderr, "--worker cmd needs the command after --");
    assertEquals((await box.admin("GET", "/tasks")).body.tasks.length, 3);
  });
});

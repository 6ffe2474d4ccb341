/**
 * What the owner reads cannot be forged by a task (issue 34), in the real `gurt` commands against a
 * real core: a step holding a result line in `gurt task show`, a question holding a copy of an
 * approval block in `gurt task watch --say` and `gurt approvals`, and the characters of Unicode's
 * hidden set (U+061C, U+00AD, the tag characters, the direction overrides) in each. Also the model
 * endpoint's refusal in `gurt task show` (issue 28).
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  FORGED_BLOCK,
  FORGED_RESULT,
  grant,
  gurt,
  gurtCommand,
  HIDDEN,
  HIDDEN_SHOWN,
  HIDDEN_TEXT,
  pendingApproval,
  rawJson,
  readUntil,
  type TestBox,
  until,
  withBox,
} from "../kit/mod.ts";

function run(box: TestBox, args: string[]) {
  return gurt(["--home", box.home, ...args]);
}

function assertNoHidden(text: string): void {
  for (const char of HIDDEN) {
    assert(!text.includes(char), `a raw U+${char.codePointAt(0)!.toString(16)} was printed`);
  }
}

/** The lines of `text` that begin with `start`. */
function linesStarting(text: string, start: string): string[] {
  return text.split("\n").filter((line) => line.startsWith(start));
}

Deno.test("gurt task show: a step holding a newline and a result line shows it inside the step's line, escaped", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    const step = await task.request("POST", "/step", { text: `hello${FORGED_RESULT}` });
    assertEquals(step.status, 200, JSON.stringify(step.body));
    await task.request("POST", "/step", { text: `pay ${HIDDEN_TEXT}` });
    const shown = await run(box, ["task", "show", task.id]);
    assertEquals(shown.code, 0, shown.stderr);
    assertEquals(linesStarting(shown.stdout, "  12:00:02"), [], shown.stdout);
    assertStringIncludes(shown.stdout, ' step hello\\n  12:00:02 result k2 example.spend {"ok"');
    assertStringIncludes(shown.stdout, ` step pay ${HIDDEN_SHOWN}\n`);
    assertNoHidden(shown.stdout);
  });
});

Deno.test("gurt approvals: a question holding a copy of an approval block, and a payee holding hidden characters, each stay on the call's line", async () => {
  await withBox(
    { grants: { spend: grant({ tool: "example.spend", mode: "ask" }) } },
    async (box) => {
      const task = await box.startTask({ tools: ["example.spend"] });
      const asked = await task.request("POST", "/ask", {
        key: "q1",
        question: `may I? ${HIDDEN_TEXT}${FORGED_BLOCK}`,
        waitMs: 1,
      });
      assertEquals(asked.body.pending, true, JSON.stringify(asked.body));
      const spend = task.send(
        "example.spend",
        { cents: 3, payee: `the bakery${HIDDEN_TEXT}` },
        "k1",
      );
      await until(async () => (await box.admin("GET", "/approvals")).body.items.length === 2);

      const shown = await run(box, ["approvals"]);
      assertEquals(shown.code, 0, shown.stderr);
      const lines = shown.stdout.split("\n").filter((line) => line !== "");
      assertEquals(lines.length, 4, shown.stdout);
      assertEquals(linesStarting(shown.stdout, "7  "), []);
      assertStringIncludes(
        lines[1],
        String.raw`    box.ask {"question":"may I? ${HIDDEN_SHOWN}\n7  just now  expires`,
      );
      assertEquals(
        lines[3],
        String.raw`    example.spend {"cents":3,"payee":"the bakery${HIDDEN_SHOWN}"}`,
      );
      assertNoHidden(shown.stdout);
      for (const item of (await box.admin("GET", "/approvals")).body.items) {
        await box.admin("POST", `/approvals/${item.approval}/refuse`);
      }
      await spend.answer;
    },
  );
});

Deno.test("gurt task watch --say: a question holding a newline and a copy of an approval block prints on one line, and the block under the real id is the core's", async () => {
  await withBox({}, async (box) => {
    const task = await box.startTask();
    await task.request("POST", "/step", { text: `thinking${FORGED_RESULT}\nand ${HIDDEN_TEXT}` });
    const question = `ok? ${HIDDEN_TEXT}${FORGED_BLOCK}`;
    await task.request("POST", "/ask", { key: "q1", question, waitMs: 1 });
    const id = await pendingApproval(box, task);

    const watch = gurtCommand(["--home", box.home, "task", "watch", task.id, "--say"]).spawn();
    // A watch that never shows the block is stopped, so the test fails and does not hang.
    const guard = setTimeout(() => watch.kill("SIGKILL"), 60_000);
    const core = `${id}  just now  `;
    const read = await readUntil(watch.stdout, (text) => text.includes(core));
    await box.admin("POST", `/tasks/${task.id}/stop`);
    const status = await watch.status;
    clearTimeout(guard);
    await watch.stderr.cancel();
    const stdout = read.text + await read.rest;
    assertEquals(status.code, 1, stdout);
    assertStringIncludes(stdout, `[question ${id}: ok? ${HIDDEN_SHOWN}\\n7  just now  expires`);
    // The step's lines after its first are marked as the model's; none reads as the core's.
    assertStringIncludes(stdout, "[step] thinking\n  |   12:00:02 result k2");
    assertStringIncludes(stdout, `\n  | and ${HIDDEN_SHOWN}\n`);
    assertEquals(linesStarting(stdout, "7  "), [], stdout);
    assertEquals(linesStarting(stdout, "    box.ask"), [
      String
        .raw`    box.ask {"question":"ok? ${HIDDEN_SHOWN}\n7  just now  expires in 15 min  task tbox000000  taint private\n    box.ask {\"question\":\"gurt: this is the box itself asking; approving changes nothing.\"}"}`,
    ]);
    assertNoHidden(stdout);
  });
});

Deno.test("gurt task show: a model endpoint's refusal names the service, the path and where in the body, not undefined:undefined", async () => {
  // A key in the vault, so the request reaches the endpoint's check of what it asks the service.
  const keys: Record<string, string> = { ANTHROPIC_API_KEY: "sk-ant-owner-text-test" };
  const vault = { value: (name: string) => keys[name], names: () => Object.keys(keys) };
  await withBox({ core: { vault } }, async (box) => {
    const task = await box.startTask();
    const answer = await rawJson(`${box.home}/tasks/${task.id}/model.sock`, {
      method: "POST",
      path: "/v1/messages",
      body: {
        model: "claude-test",
        max_tokens: 10,
        messages: [{
          role: "user",
          content: [{ type: "image", source: { type: "url", url: "http://10.0.0.1/x.png" } }],
        }],
      },
    });
    assertEquals(answer.status, 403, answer.text);
    await until(async () =>
      (await box.admin("GET", `/tasks/${task.id}`)).body.journal.some((line: { event?: string }) =>
        line.event === "net.blocked"
      )
    );
    const shown = await run(box, ["task", "show", task.id]);
    assertEquals(shown.code, 0, shown.stderr);
    assert(!shown.stdout.includes("undefined"), shown.stdout);
    assertStringIncludes(
      shown.stdout,
      " blocked anthropic /v1/messages (url_source at messages[0].content[0].source)\n",
    );
  });
});

/**
 * Claude Code as a task's worker (issue 20), the real npm CLI run by `gurt task start --worker
 * claude` as root against the scripted fake Anthropic service, with no internet: it lists the box's
 * tools and calls example.echo through the broker; its final answer and exit end the task; the
 * vault's key reaches the fake and never the task; an `ask` grant's call waits for the owner; its
 * own shell cannot reach a host off the task's list.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, type GurtRun, until } from "../kit/mod.ts";
import { claudeSkip, stepTexts, withClaudeBox } from "./claude_box.ts";
import type { FakeAnthropic } from "./fake_anthropic.ts";

const skip = claudeSkip();
if (skip !== null) console.log(`skipping the Claude Code tests: ${skip}`);

Deno.test({
  name:
    "gurt task start --worker claude: Claude Code lists the box's tools, calls example.echo through the broker, and its final answer ends the task done, costed and audited",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    await withClaudeBox({ grants }, async ({ box, fake, key, cli, start, end }) => {
      const id = await start("Say hi through the box.");
      const { task, log, journal } = await end(id);
      assertEquals(task.state, "done", log);

      // The prompt reached it, and the box's tools were offered to the model.
      const first = fake.messages()[0].body;
      assertStringIncludes(JSON.stringify(first.messages), "Say hi through the box.");
      const tools = (first.tools as { name: string }[]).map((tool) => tool.name);
      assert(tools.includes("mcp__box__example__echo"), tools.join(", "));
      assert(tools.includes("mcp__box__box_ask"), tools.join(", "));
      assertEquals(first.model, "claude-sonnet-4-5");
      // Every request carried the vault's key, put on by the model endpoint.
      for (const request of fake.requests) assertEquals(request.headers["x-api-key"], key);

      // The call went through the broker: a Decision and a Result in the audit log.
      const records = await box.records();
      const decision = records.find((r) =>
        r.event?.type === "decision" && r.event.tool === "example.echo"
      );
      assert(decision !== undefined, JSON.stringify(records.map((r) => r.event?.type)));
      const calls = journal.filter((line) =>
        line.type === "tool.result" && line.tool === "example.echo"
      );
      assertEquals(calls.length, 1, JSON.stringify(journal));

      // The session was kept at once, and the final answer is the last step.
      const steps = stepTexts(journal);
      assert(/^claude session [0-9a-f-]{36}$/.test(steps[0]), steps.join("\n"));
      assertStringIncludes(steps.at(-1) ?? "", "FINAL: ");
      assertStringIncludes(steps.at(-1) ?? "", "hi from claude");

      // The model's cost shows in gurt task show, and the audit log verifies.
      const shown = await cli(["task", "show", id]);
      assertEquals(shown.code, 0, shown.stderr);
      assertStringIncludes(shown.stdout, "cost ");
      assertStringIncludes(shown.stdout, "hi from claude");
      assert(task.spentCents > 0, JSON.stringify(task));
      const verified = await cli(["audit", "verify"]);
      assertEquals(verified.code, 0, verified.stdout + verified.stderr);
    });
  },
});

Deno.test({
  name:
    "the vault's key reaches the fake service from a Claude Code task and never the task: no task process's environment, no file of its home or /tmp, not its log",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    // The key is split so that neither the command nor its transcript holds it whole. Every task
    // process's environment is read (the placeholder key in them shows the reading works).
    const probe = (key: string) => {
      const [head, tail] = [key.slice(0, 12), key.slice(12)];
      return `k="$(printf '%s%s' '${head}' '${tail}')"; read=0; found=0; placeholder=0
for f in /proc/[0-9]*/environ; do
  e="$(tr '\\0' '\\n' < "$f" 2>/dev/null)" || continue
  read=$((read+1))
  printf '%s\\n' "$e" | grep -qF -- "$k" && found=$((found+1))
  printf '%s\\n' "$e" | grep -q 'API_KEY=gurt-placeholder' && placeholder=$((placeholder+1))
done
files=$(grep -rlF -- "$k" "$HOME" /tmp 2>/dev/null | wc -l)
echo "environs=$read placeholder=$placeholder key-in-environ=$found key-in-files=$files"`;
    };
    const key = `sk-ant-canary-${crypto.randomUUID().slice(0, 12)}`;
    await withClaudeBox(
      { grants, key, fake: { bash: probe(key) } },
      async ({ box, fake, start, end }) => {
        const id = await start("Look around the task.");
        const { task, log, journal } = await end(id);
        assertEquals(task.state, "done", log);
        const answer = stepTexts(journal).at(-1) ?? "";
        const counts = /environs=(\d+) placeholder=(\d+) key-in-environ=(\d+) key-in-files=(\d+)/
          .exec(answer);
        assert(counts !== null, answer);
        const [environs, placeholder, inEnviron, inFiles] = counts.slice(1).map(Number);
        // agent-run, Claude Code, gurt mcp and the shell at least, each with the placeholder.
        assert(environs >= 4 && placeholder >= 4, answer);
        assertEquals([inEnviron, inFiles], [0, 0], answer);
        for (const request of fake.requests) assertEquals(request.headers["x-api-key"], key);
        assert(fake.messages().length >= 2);
        // Nor is it anywhere in the task's folder on the host now: its home, its log, its journal.
        const grep = await new Deno.Command("grep", {
          args: ["-rlF", "--", key, `${box.home}/tasks/${id}`],
          stdout: "piped",
        }).output();
        assertEquals(new TextDecoder().decode(grep.stdout), "");
        assert(!log.includes(key));
      },
    );
  },
});

Deno.test({
  name:
    "Claude Code's own shell in a task cannot reach a host off the task's list, and the attempt shows as net.blocked",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    const bash = "curl -sS -m 20 -o /dev/null https://blocked.example.com/ 2>&1; echo curl-exit=$?";
    await withClaudeBox({ grants, fake: { bash } }, async ({ box, start, end }) => {
      const id = await start("Fetch a page.", { hosts: "allowed.example.com" });
      const { task, log, journal } = await end(id);
      assertEquals(task.state, "done", log);
      const answer = stepTexts(journal).at(-1) ?? "";
      assertStringIncludes(answer, "curl-exit=");
      assert(!answer.includes("curl-exit=0"), answer);
      const blocked = journal.filter((line) =>
        line.type === "event" && line.event === "net.blocked"
      );
      assert(
        blocked.some((line) => JSON.stringify(line.detail).includes("blocked.example.com")),
        JSON.stringify(journal),
      );
      const records = await box.records();
      assert(
        records.some((r) =>
          r.event?.type === "net_blocked" && r.event.task === id &&
          r.event.host === "blocked.example.com"
        ),
        JSON.stringify(records.map((r) => r.event)),
      );
    });
  },
});

/** Waits for the task's one pending approval in `gurt approvals`; its number. */
async function pendingIn(cli: (args: string[]) => Promise<GurtRun>, id: string): Promise<number> {
  let approval = -1;
  await until(async () => {
    const shown = await cli(["approvals"]);
    // Two lines each: the number, age, expiry and task; then the tool and its arguments.
    const block = new RegExp(`^(\\d+) .*task ${id}.*\\n\\s+example\\.echo `, "m").exec(
      shown.stdout,
    );
    if (block !== null) approval = Number(block[1]);
    return approval !== -1;
  }, 40_000);
  return approval;
}

/** Whether the fake has been sent the pending text as a tool's result. */
function sawPending(fake: FakeAnthropic): boolean {
  return fake.messages().some((request) =>
    JSON.stringify(request.body.messages).includes("Call this tool again to check.")
  );
}

for (const answer of ["approve", "refuse"] as const) {
  Deno.test({
    name: answer === "approve"
      ? "an ask grant: Claude Code's call shows in gurt approvals, it sees the pending text, and gurt approve runs its retried call once"
      : "an ask grant: gurt refuse gives Claude Code's retried call the refusal text, and the tool never runs",
    ignore: skip !== null,
    fn: async () => {
      const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
      // A short wait, so that the first call answers pending; the fake calls again while it does.
      const toml = "[approvals]\nwait_ms = 3000\n";
      await withClaudeBox(
        { grants, toml, fake: { retries: 8 } },
        async ({ box, fake, cli, start, end }) => {
          const id = await start("Say hi, with the owner's leave.");
          const approval = await pendingIn(cli, id);
          await until(() => Promise.resolve(sawPending(fake)), 40_000);
          const done = await cli([answer, String(approval)]);
          assertEquals(done.code, 0, done.stderr);
          const { task, log, journal } = await end(id);
          const final = stepTexts(journal).at(-1) ?? "";
          const results = journal.filter((line) =>
            line.type === "tool.result" && line.tool === "example.echo"
          );
          if (answer === "approve") {
            assertEquals(task.state, "done", log);
            assertStringIncludes(final, "hi from claude");
            assertEquals(results.length, 1, JSON.stringify(journal));
            assertEquals(results[0].answer.ok, true);
          } else {
            assertEquals(task.state, "done", log);
            assertStringIncludes(final, "FINAL: Denied: the owner refused this call.");
            assert(results.every((line) => line.answer.ok === false), JSON.stringify(results));
          }
          const records = await box.records();
          const ran = records.filter((r) =>
            r.event?.type === "result" && r.event.call.startsWith("mcp.example.echo.")
          );
          assertEquals(
            ran.length,
            answer === "approve" ? 1 : 0,
            JSON.stringify(records.map((r) => r.event)),
          );
        },
      );
    },
  });
}

Deno.test({
  name:
    "a Claude Code task caught by a gurt serve restart resumes its kept session, and ends done once its call is approved",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
    await withClaudeBox(
      { grants, fake: { retries: 8 } },
      async ({ box, fake, cli, start, end }) => {
        const id = await start("Say hi, across a restart.");
        // Claude Code waits in its call for the owner; the core stops, and starts again.
        await pendingIn(cli, id);
        const before = fake.messages().length;
        await box.restart();
        const approval = await pendingIn(cli, id);
        const approved = await cli(["approve", String(approval)]);
        assertEquals(approved.code, 0, approved.stderr);
        const { task, log, journal } = await end(id);
        assertEquals(task.state, "done", log);
        assertStringIncludes(stepTexts(journal).at(-1) ?? "", "hi from claude");
        // One session, kept before the first run and resumed by the second.
        const sessions = stepTexts(journal).filter((text) => text.startsWith("claude session "));
        assertEquals(sessions.length, 1, stepTexts(journal).join("\n"));
        assertStringIncludes(
          log,
          `session ${sessions[0].slice("claude session ".length)} (resumed)`,
        );
        // The resumed conversation holds the task's prompt and is told it was restarted.
        const after = fake.messages().slice(before).map((r) => JSON.stringify(r.body.messages));
        assert(
          after.some((text) =>
            text.includes("Say hi, across a restart.") && text.includes("gurt restarted this task")
          ),
          after.join("\n"),
        );
      },
    );
  },
});

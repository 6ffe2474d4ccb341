/**
 * Codex CLI as a task's worker (issue 20), the real npm CLI run by `gurt task start --worker codex`
 * as root against the scripted fake Responses service, with no internet: it lists the box's tools
 * and calls example.echo through the broker; its final answer and exit end the task; the vault's
 * key reaches the fake and never the task; an `ask` grant's call waits for the owner; its own shell
 * cannot reach a host off the task's list.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, type GurtRun, until } from "../kit/mod.ts";
import { codexSkip, stepTexts, withCodexBox } from "./codex_box.ts";
import type { FakeResponses } from "./fake_responses.ts";

const skip = codexSkip();
if (skip !== null) console.log(`skipping the Codex tests: ${skip}`);

Deno.test({
  name:
    "gurt task start --worker codex: Codex lists the box's tools, calls example.echo through the broker, and its final answer ends the task done, costed and audited",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    await withCodexBox({ grants }, async ({ box, fake, key, cli, start, end }) => {
      const id = await start("Say hi through the box.");
      const { task, log, journal } = await end(id);
      assertEquals(task.state, "done", log);

      // The prompt reached it, and the box's tools were offered to the model in their namespace.
      const first = fake.turns()[0];
      assertStringIncludes(JSON.stringify(first.input), "Say hi through the box.");
      const namespace = (first.tools as Record<string, unknown>[])
        .find((tool) => tool.type === "namespace" && tool.name === "mcp__box");
      assert(namespace !== undefined, JSON.stringify(first.tools));
      const tools = (namespace.tools as { name: string }[]).map((tool) => tool.name);
      assert(tools.includes("example__echo"), tools.join(", "));
      assert(tools.includes("box_ask"), tools.join(", "));
      assertEquals(first.model, "gpt-5-codex");
      // Every request carried the vault's key, put on by the model endpoint.
      for (const request of fake.requests) {
        assertEquals(request.headers.authorization, `Bearer ${key}`);
      }

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

      // The session was kept as soon as Codex named it, and the final answer is the last step.
      const steps = stepTexts(journal);
      assert(/^codex session [0-9a-f-]{36}$/.test(steps[0]), steps.join("\n"));
      assertStringIncludes(steps.at(-1) ?? "", "FINAL: ");
      assertStringIncludes(steps.at(-1) ?? "", "hi from codex");

      // The model's cost shows in gurt task show, and the audit log verifies.
      const shown = await cli(["task", "show", id]);
      assertEquals(shown.code, 0, shown.stderr);
      assertStringIncludes(shown.stdout, "cost ");
      assertStringIncludes(shown.stdout, "hi from codex");
      assert(task.spentCents > 0, JSON.stringify(task));
      assertEquals(fake.turns().length, 2, "one call and one answer, no compaction");
      const verified = await cli(["audit", "verify"]);
      assertEquals(verified.code, 0, verified.stdout + verified.stderr);
    });
  },
});

/** The environment of every process on the machine whose environment names task `id`. */
async function taskEnvirons(id: string): Promise<{ pid: string; env: string }[]> {
  const found: { pid: string; env: string }[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const env = await Deno.readTextFile(`/proc/${entry.name}/environ`).catch(() => "");
    if (env.split("\0").includes(`BOX_TASK=${id}`)) found.push({ pid: entry.name, env });
  }
  return found;
}

Deno.test({
  name:
    "the vault's key reaches the fake service from a Codex task and never the task: no task process's environment, no file of its home or /tmp, not its log",
  ignore: skip !== null,
  fn: async () => {
    // An ask grant holds the task while every process of it is looked at from outside, as root.
    const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
    const key = `sk-proj-canary-${crypto.randomUUID().slice(0, 12)}`;
    await withCodexBox({ grants, key }, async ({ box, fake, cli, start, end }) => {
      const id = await start("Say hi, with the owner's leave.");
      const approval = await pendingIn(cli, id);
      const processes = await taskEnvirons(id);
      const names = processes.map(({ pid }) =>
        Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").slice(0, 3).join(" ")
      );
      // agent-run, Codex and gurt mcp at least; the first two with the placeholder key.
      assert(processes.length >= 3, names.join("\n"));
      assert(names.some((name) => name.includes("/bin/codex")), names.join("\n"));
      assert(
        processes.filter(({ env }) => env.includes("OPENAI_API_KEY=gurt-placeholder-key"))
          .length >= 2,
        names.join("\n"),
      );
      for (const { env } of processes) assert(!env.includes(key), names.join("\n"));
      // Nor in a file of the task's own /tmp, seen through a task process's root.
      const root = `/proc/${processes[0].pid}/root`;
      assert(Deno.statSync(`${root}/tmp`).isDirectory);
      assert(Deno.statSync(`${root}${box.home}/tasks/${id}/home/.codex/config.toml`).isFile);
      const inTmp = await new Deno.Command("grep", {
        args: ["-rlF", "--", key, `${root}/tmp`, `${root}${box.home}/tasks/${id}/home`],
        stdout: "piped",
        stderr: "null",
      }).output();
      assertEquals(new TextDecoder().decode(inTmp.stdout), "");
      const refused = await cli(["refuse", String(approval)]);
      assertEquals(refused.code, 0, refused.stderr);

      const { task, log } = await end(id);
      assertEquals(task.state, "done", log);
      for (const request of fake.requests) {
        assertEquals(request.headers.authorization, `Bearer ${key}`);
      }
      assert(fake.turns().length >= 2);
      // Nor is it anywhere in the task's folder on the host now: its home, its log, its journal.
      const grep = await new Deno.Command("grep", {
        args: ["-rlF", "--", key, `${box.home}/tasks/${id}`],
        stdout: "piped",
      }).output();
      assertEquals(new TextDecoder().decode(grep.stdout), "");
      assert(!log.includes(key));
    });
  },
});

Deno.test({
  name:
    "Codex's own shell in a task cannot reach a host off the task's list, and the attempt shows as net.blocked",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    const shell =
      "curl -sS -m 20 -o /dev/null https://blocked.example.com/ 2>&1; echo curl-exit=$?";
    await withCodexBox({ grants, fake: { shell } }, async ({ box, start, end }) => {
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
function sawPending(fake: FakeResponses): boolean {
  return fake.turns().some((body) =>
    JSON.stringify(body.input).includes("Call this tool again to check.")
  );
}

for (const answer of ["approve", "refuse"] as const) {
  Deno.test({
    name: answer === "approve"
      ? "an ask grant: Codex's call shows in gurt approvals, it sees the pending text, and gurt approve runs its retried call once"
      : "an ask grant: gurt refuse gives Codex's retried call the refusal text, and the tool never runs",
    ignore: skip !== null,
    fn: async () => {
      const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
      // A short wait, so that the first call answers pending; the fake calls again while it does.
      const toml = "[approvals]\nwait_ms = 3000\n";
      await withCodexBox(
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
          assertEquals(task.state, "done", log);
          if (answer === "approve") {
            assertStringIncludes(final, "hi from codex");
            assertEquals(results.length, 1, JSON.stringify(journal));
            assertEquals(results[0].answer.ok, true);
          } else {
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
    "a Codex task caught by a gurt serve restart resumes its kept session with exec resume, and ends done once its call is approved",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
    await withCodexBox(
      { grants, fake: { retries: 8 } },
      async ({ box, fake, cli, start, end }) => {
        const id = await start("Say hi, across a restart.");
        // Codex waits in its call for the owner; the core stops, and starts again.
        await pendingIn(cli, id);
        const before = fake.turns().length;
        await box.restart();
        const approval = await pendingIn(cli, id);
        const approved = await cli(["approve", String(approval)]);
        assertEquals(approved.code, 0, approved.stderr);
        const { task, log, journal } = await end(id);
        assertEquals(task.state, "done", log);
        assertStringIncludes(stepTexts(journal).at(-1) ?? "", "hi from codex");
        // One session, named by Codex's first run and resumed by the second.
        const sessions = stepTexts(journal).filter((text) => text.startsWith("codex session "));
        assertEquals(sessions.length, 1, stepTexts(journal).join("\n"));
        assertStringIncludes(
          log,
          `session ${sessions[0].slice("codex session ".length)} (resumed)`,
        );
        // The resumed conversation holds the task's prompt and is told it was restarted.
        const after = fake.turns().slice(before).map((body) => JSON.stringify(body.input));
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

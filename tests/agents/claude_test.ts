/**
 * Claude Code as a task's worker (issue 20), the real npm CLI run by `gurt task start --worker
 * claude` as root against the scripted fake Anthropic service, with no internet: it lists the box's
 * tools and calls example.echo through the broker; its final answer and exit end the task; the
 * vault's key reaches the fake and never the task; an `ask` grant's call waits for the owner; its
 * own shell cannot reach a host off the task's list.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant } from "../kit/mod.ts";
import {
  ASK_TOML,
  askRoundTrip,
  assertBrokeredAndCosted,
  assertKeyNotInTask,
  assertRestartResumes,
  assertShellBlocked,
  BLOCKED_CURL,
  keyProbe,
} from "./agent_box.ts";
import { claudeSkip, withClaudeBox } from "./claude_box.ts";
import type { FakeAnthropic } from "../../mod/stand-in/anthropic.ts";

const skip = claudeSkip();
if (skip !== null) console.log(`skipping the Claude Code tests: ${skip}`);

Deno.test({
  name:
    "gurt task start --worker claude: Claude Code lists the box's tools, calls example.echo through the broker, and its final answer ends the task done, costed and audited",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    await withClaudeBox({ grants }, async (claude) => {
      const { fake, key, start, end } = claude;
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

      // Through the broker, its session kept at once (the first step) and its answer the last,
      // costed, audited.
      await assertBrokeredAndCosted(claude, { id, task, journal }, {
        session: /^claude session [0-9a-f-]{36}$/,
        said: "hi from claude",
      });
    });
  },
});

Deno.test({
  name:
    "the vault's key reaches the fake service from a Claude Code task and never the task: no task process's environment, no file of its home or /tmp, not its log",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    const key = `sk-ant-canary-${crypto.randomUUID().slice(0, 12)}`;
    await withClaudeBox({ grants, key, fake: { bash: keyProbe(key) } }, async (claude) => {
      await assertKeyNotInTask(claude, key);
      for (const request of claude.fake.requests) {
        assertEquals(request.headers["x-api-key"], key);
      }
      assert(claude.fake.messages().length >= 2);
    });
  },
});

Deno.test({
  name:
    "Claude Code's own shell in a task cannot reach a host off the task's list, and the attempt shows as net.blocked",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    await withClaudeBox({ grants, fake: { bash: BLOCKED_CURL } }, assertShellBlocked);
  },
});

/** What the model was sent, a text a request. */
function sentTo(fake: FakeAnthropic): string[] {
  return fake.messages().map((request) => JSON.stringify(request.body.messages));
}

for (const answer of ["approve", "refuse"] as const) {
  Deno.test({
    name: answer === "approve"
      ? "an ask grant: Claude Code's call shows in gurt approvals, it sees the pending text, and gurt approve runs its retried call once"
      : "an ask grant: gurt refuse gives Claude Code's retried call the refusal text, and the tool never runs",
    ignore: skip !== null,
    fn: async () => {
      const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
      await withClaudeBox({ grants, toml: ASK_TOML, fake: { retries: 8 } }, async (claude) => {
        const { final } = await askRoundTrip(claude, answer, () => sentTo(claude.fake));
        if (answer === "approve") assertStringIncludes(final, "hi from claude");
      });
    },
  });
}

Deno.test({
  name:
    "a Claude Code task caught by a gurt serve restart resumes its kept session, and ends done once its call is approved",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
    await withClaudeBox({ grants, fake: { retries: 8 } }, async (claude) => {
      // Kept before the first run and resumed by the second.
      await assertRestartResumes(claude, "claude", () => sentTo(claude.fake));
    });
  },
});

/**
 * A real coding agent calls an app's tools through `gurt mcp` (issue 29): Claude Code, run by
 * `gurt task start --worker claude` as root against the scripted fake Anthropic service, in a task
 * given @modelcontextprotocol/server-everything's echo and get_env as an app. The model asks for
 * `everyagent__echo` and then `everyagent__get_env`; the agent gets the echo's text, and the
 * environment it is shown holds the app's declared key only as the vault's redaction marker; the
 * journal and the audit log record both calls, and the key is nowhere in the task.
 *
 * The app is named `everyagent`, not `everything`: an app's user is named after it, so the tests
 * that run at once (deno task test --parallel) each need an app name of their own.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant } from "../kit/mod.ts";
import { REDACTED } from "../../mod/vault/mod.ts";
import { readAppFolder } from "../../mod/apps/mod.ts";
import { filesHolding, stepTexts } from "../agents/agent_box.ts";
import { claudeSkip, withClaudeBox } from "../agents/claude_box.ts";
import type { FakeBody } from "../../mod/stand-in/anthropic.ts";
import { EVERYTHING, everythingManifest, haveTestApps } from "./app_kit.ts";

const APP = "everyagent";

const skip = claudeSkip() ?? (haveTestApps ? null : `no ${EVERYTHING}: install.sh --test`);
if (skip !== null) console.log(`skipping the agent's app test: ${skip}`);

/** The texts of the tool_result blocks of what the model was last sent, in order. */
function toolResults(messages: FakeBody[]): string[] {
  const texts: string[] = [];
  for (const message of messages) {
    if (message.role !== "user" || !Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block?.type !== "tool_result") continue;
      const inner = block.content;
      texts.push(
        typeof inner === "string"
          ? inner
          : (inner as FakeBody[]).filter((b) => b?.type === "text").map((b) => b.text).join("\n"),
      );
    }
  }
  return texts;
}

Deno.test({
  name:
    "Claude Code calls an app's tools through gurt mcp: server-everything's echo text reaches it, its get_env shows the app's key only redacted, and the journal and audit log record both calls",
  ignore: skip !== null,
  fn: async () => {
    const secret = `sk-everything-${crypto.randomUUID()}`;
    const said = `hello from the app ${crypto.randomUUID().slice(0, 8)}`;
    const grants = {
      echo: grant({ tool: `${APP}.echo` }),
      env: grant({ tool: `${APP}.get_env` }),
    };
    const calls = [
      { name: `${APP}__echo`, input: { message: said } },
      { name: `${APP}__get_env`, input: {} },
    ];
    await withClaudeBox({ grants, fake: { calls }, apps: true }, async (claude) => {
      const { box, fake } = claude;
      const set = await box.admin("PUT", "/api/vault/EVERYTHING_TOKEN", { value: secret });
      assertEquals(set.status, 200, JSON.stringify(set.body));
      const source = await Deno.makeTempDir({ prefix: "gurt-agent-app-" });
      try {
        await Deno.writeTextFile(
          `${source}/app.toml`,
          everythingManifest({ token: true }),
        );
        const added = await box.admin("POST", "/apps", {
          name: APP,
          files: await readAppFolder(source),
        });
        assertEquals(added.status, 200, JSON.stringify(added.body));
      } finally {
        await Deno.remove(source, { recursive: true });
      }

      const id = await claude.start("Echo a greeting, then show the app's environment.", {
        tools: [`${APP}.echo`, `${APP}.get_env`],
      });
      const { task, log, journal } = await claude.end(id);
      assertEquals(task.state, "done", log);

      // gurt mcp offered the app's tools to the agent, which offered them to the model.
      const offered = (fake.messages()[0].body.tools as { name: string }[]).map((t) => t.name);
      assert(offered.includes(`mcp__box__${APP}__echo`), offered.join(", "));
      assert(offered.includes(`mcp__box__${APP}__get_env`), offered.join(", "));

      // What the agent received of each call, as it passed it on to the model.
      const last = fake.messages().at(-1)!.body;
      const results = toolResults(last.messages);
      assertEquals(results.length, 2, JSON.stringify(last.messages));
      assertStringIncludes(results[0], said);
      assert(
        new RegExp(`EVERYTHING_TOKEN\\W+${escape(REDACTED)}`).test(results[1]),
        results[1].slice(0, 2000),
      );
      for (const request of fake.requests) {
        assert(!JSON.stringify(request.body).includes(secret), "the app's key reached the model");
      }
      assertStringIncludes(stepTexts(journal).at(-1) ?? "", "FINAL: ");

      // Through the broker: a Decision and a Result record for each, one tool.result line each.
      const records = await box.records();
      for (const tool of [`${APP}.echo`, `${APP}.get_env`]) {
        const decided = records.find((r) =>
          r.event?.type === "decision" && r.event.tool === tool && r.event.session === id
        );
        assert(decided !== undefined, `no decision for ${tool}`);
        assertEquals(decided.event.outcome, { outcome: "allowed" });
        assert(
          records.some((r) =>
            r.event?.type === "result" && r.event.decision === decided.seq &&
            r.event.status === "result"
          ),
          `no result record for ${tool}`,
        );
        const lines = journal.filter((line) => line.type === "tool.result" && line.tool === tool);
        assertEquals(lines.length, 1, JSON.stringify(journal));
        assertEquals(lines[0].answer.ok, true, JSON.stringify(lines[0]));
      }
      const echoed = journal.find((line) =>
        line.type === "tool.result" && line.tool === `${APP}.echo`
      );
      assertStringIncludes(JSON.stringify(echoed.answer), said);

      // The key is nowhere in the task (home, log, journal) nor in the audit log.
      assertEquals(
        await filesHolding([`${box.home}/tasks/${id}`, `${box.home}/audit`], secret),
        "",
      );
      assert(!log.includes(secret));
      const verified = await claude.cli(["audit", "verify"]);
      assertEquals(verified.code, 0, verified.stdout + verified.stderr);
    });
  },
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

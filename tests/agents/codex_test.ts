/**
 * Codex CLI as a task's worker (issue 20), the real npm CLI run by `gurt task start --worker codex`
 * as root against the scripted fake Responses service, with no internet: it lists the box's tools
 * and calls example.echo through the broker; its final answer and exit end the task; the vault's
 * key reaches the fake and never the task; an `ask` grant's call waits for the owner; its own shell
 * cannot reach a host off the task's list.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant } from "../kit/mod.ts";
import {
  ASK_TOML,
  askRoundTrip,
  assertBrokeredAndCosted,
  assertRestartResumes,
  assertShellBlocked,
  BLOCKED_CURL,
  filesHolding,
  pendingIn,
} from "./agent_box.ts";
import { codexSkip, withCodexBox } from "./codex_box.ts";
import type { FakeResponses } from "../../mod/stand-in/responses.ts";

const skip = codexSkip();
if (skip !== null) console.log(`skipping the Codex tests: ${skip}`);

Deno.test({
  name:
    "gurt task start --worker codex: Codex lists the box's tools, calls example.echo through the broker, and its final answer ends the task done, costed and audited",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    await withCodexBox({ grants }, async (codex) => {
      const { fake, key, start, end } = codex;
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

      // Through the broker, its session kept as soon as Codex named it (the first step) and its
      // answer the last, costed, audited.
      await assertBrokeredAndCosted(codex, { id, task, journal }, {
        session: /^codex session [0-9a-f-]{36}$/,
        said: "hi from codex",
      });
      assertEquals(fake.turns().length, 2, "one call and one answer, no compaction");
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
      assertEquals(
        await filesHolding([`${root}/tmp`, `${root}${box.home}/tasks/${id}/home`], key),
        "",
      );
      const refused = await cli(["refuse", String(approval)]);
      assertEquals(refused.code, 0, refused.stderr);

      const { task, log } = await end(id);
      assertEquals(task.state, "done", log);
      for (const request of fake.requests) {
        assertEquals(request.headers.authorization, `Bearer ${key}`);
      }
      assert(fake.turns().length >= 2);
      // Nor is it anywhere in the task's folder on the host now: its home, its log, its journal.
      assertEquals(await filesHolding(`${box.home}/tasks/${id}`, key), "");
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
    await withCodexBox({ grants, fake: { shell: BLOCKED_CURL } }, assertShellBlocked);
  },
});

/** What the model was sent, a text a turn. */
function sentTo(fake: FakeResponses): string[] {
  return fake.turns().map((body) => JSON.stringify(body.input));
}

for (const answer of ["approve", "refuse"] as const) {
  Deno.test({
    name: answer === "approve"
      ? "an ask grant: Codex's call shows in gurt approvals, it sees the pending text, and gurt approve runs its retried call once"
      : "an ask grant: gurt refuse gives Codex's retried call the refusal text, and the tool never runs",
    ignore: skip !== null,
    fn: async () => {
      const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
      await withCodexBox({ grants, toml: ASK_TOML, fake: { retries: 8 } }, async (codex) => {
        const { final } = await askRoundTrip(codex, answer, () => sentTo(codex.fake));
        if (answer === "approve") assertStringIncludes(final, "hi from codex");
      });
    },
  });
}

Deno.test({
  name:
    "a Codex task caught by a gurt serve restart resumes its kept session with exec resume, and ends done once its call is approved",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
    await withCodexBox({ grants, fake: { retries: 8 } }, async (codex) => {
      // Named by Codex's first run and resumed by the second.
      await assertRestartResumes(codex, "codex", () => sentTo(codex.fake));
    });
  },
});

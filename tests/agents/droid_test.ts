/**
 * Factory's Droid as a task's worker (issue 20): the real droid 0.215.0 run by `gurt task start
 * --worker droid` as root against the scripted fake Anthropic service (`[models]
 * anthropic_base_url`), with no internet. It lists the box's tools (loading them with its
 * ToolSearch tool) and calls example.echo through the broker; its final answer and exit end the
 * task; the vault's key reaches the fake and never the task; an `ask` grant's call waits for the
 * owner; its own shell cannot reach a host off the task's list; its calls to api.factory.ai go
 * through the box, which answers them itself, and nothing else leaves.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, type Json, until } from "../kit/mod.ts";
import {
  type AgentBox,
  agentSkip,
  filesHolding,
  keyProbe,
  pendingIn,
  probeCounts,
  stepTexts,
  withAgentBox,
} from "./agent_box.ts";
import { type FakeDroidOptions, startFakeAnthropicDroid } from "./fake_anthropic_droid.ts";
import type { FakeAnthropic } from "./fake_anthropic.ts";
import { DROID_DEFAULT_MODEL } from "../../mod/agents/droid.ts";

const skip = agentSkip("droid");
if (skip !== null) console.log(`skipping the Droid tests: ${skip}`);

/** Enough input tokens per answer that a few answers cost whole cents. */
const USAGE = { input_tokens: 100_000, output_tokens: 50 };

/** Runs `work` on a Droid box: the fake as anthropic_base_url, a canary ANTHROPIC_API_KEY. */
async function withDroidBox(
  setup: { grants: Record<string, string>; fake?: FakeDroidOptions; toml?: string; key?: string },
  work: (droid: AgentBox & { fake: FakeAnthropic; key: string }) => Promise<void>,
): Promise<void> {
  const key = setup.key ?? `sk-ant-canary-${crypto.randomUUID().slice(0, 12)}`;
  const fake = startFakeAnthropicDroid({ usage: USAGE, ...setup.fake });
  try {
    await withAgentBox({
      agent: "droid",
      grants: setup.grants,
      vault: { ANTHROPIC_API_KEY: key },
      toml: `[models]\nanthropic_base_url = "${fake.url}"\n${setup.toml ?? ""}`,
    }, (box) => work({ ...box, fake, key }));
  } finally {
    await fake.close();
  }
}

/** The names of the tools a request offered. */
function toolNames(body: Json): string[] {
  return ((body.tools ?? []) as { name: string }[]).map((tool) => tool.name);
}

Deno.test({
  name:
    "gurt task start --worker droid: Droid lists the box's tools through ToolSearch, calls example.echo through the broker, and its final answer ends the task done, costed and audited",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    await withDroidBox({ grants }, async ({ box, fake, key, cli, start, end }) => {
      const id = await start("Say hi through the box.");
      const { task, log, journal } = await end(id);
      assertEquals(task.state, "done", log);

      // The prompt reached it; the box's tools were named (deferred), loaded by ToolSearch, and
      // offered to the model.
      const requests = fake.messages();
      const first = requests[0].body;
      assertStringIncludes(JSON.stringify(first.messages), "Say hi through the box.");
      assertStringIncludes(JSON.stringify(first.messages), "box___example__echo");
      assert(toolNames(first).includes("ToolSearch"), toolNames(first).join(", "));
      assertEquals(first.model, DROID_DEFAULT_MODEL);
      const loaded = requests.find((r) => toolNames(r.body).includes("box___example__echo"));
      assert(loaded !== undefined, requests.map((r) => toolNames(r.body).join(",")).join("\n"));
      assert(toolNames(loaded.body).includes("box___box_ask"), toolNames(loaded.body).join(", "));
      // Every request carried the vault's key, put on by the model endpoint.
      for (const request of fake.requests) assertEquals(request.headers["x-api-key"], key);

      // The call went through the broker: a Decision and a Result in the audit log.
      const records = await box.records();
      assert(
        records.some((r) => r.event?.type === "decision" && r.event.tool === "example.echo"),
        JSON.stringify(records.map((r) => r.event?.type)),
      );
      const calls = journal.filter((line) =>
        line.type === "tool.result" && line.tool === "example.echo"
      );
      assertEquals(calls.length, 1, JSON.stringify(journal));

      // The session was kept as a step, and the final answer is the last step.
      const steps = stepTexts(journal);
      assert(/^droid session [0-9a-f-]{36}$/.test(steps[0]), steps.join("\n"));
      assertStringIncludes(steps.at(-1) ?? "", "FINAL: ");
      assertStringIncludes(steps.at(-1) ?? "", "hi from droid");
      // Droid's stream-json output is on the worker log.
      assertStringIncludes(log, '"type":"completion"');

      // The model's cost shows in gurt task show, and the audit log verifies.
      const shown = await cli(["task", "show", id]);
      assertEquals(shown.code, 0, shown.stderr);
      assertStringIncludes(shown.stdout, "cost ");
      assertStringIncludes(shown.stdout, "hi from droid");
      assert(task.spentCents > 0, JSON.stringify(task));
      const verified = await cli(["audit", "verify"]);
      assertEquals(verified.code, 0, verified.stdout + verified.stderr);
    });
  },
});

Deno.test({
  name:
    "the vault's key reaches the fake service from a Droid task and never the task: no task process's environment, no file of its home or /tmp, not its log",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    const key = `sk-ant-canary-${crypto.randomUUID().slice(0, 12)}`;
    await withDroidBox(
      { grants, key, fake: { bash: keyProbe(key) } },
      async ({ box, fake, start, end }) => {
        const id = await start("Look around the task.");
        const { task, log, journal } = await end(id);
        assertEquals(task.state, "done", log);
        // The probe ran through Droid's own shell tool, Execute.
        const answer = stepTexts(journal).at(-1) ?? "";
        const counts = probeCounts(answer);
        assert(counts !== null, answer);
        // agent-run, Droid, gurt mcp and the shell at least, each with the placeholder.
        assert(counts.environs >= 4 && counts.placeholder >= 4, answer);
        assertEquals([counts.inEnviron, counts.inFiles], [0, 0], answer);
        for (const request of fake.requests) assertEquals(request.headers["x-api-key"], key);
        assert(fake.messages().length >= 2);
        // Nor is it anywhere in the task's folder on the host now: its home (Droid's own logs and
        // sessions), its log, its journal.
        assertEquals(await filesHolding(`${box.home}/tasks/${id}`, key), "");
        assert(!log.includes(key));
      },
    );
  },
});

Deno.test({
  name:
    "Droid's own shell tool (Execute) in a task cannot reach a host off the task's list, and the attempt shows as net.blocked",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    const bash = "curl -sS -m 20 -o /dev/null https://blocked.example.com/ 2>&1; echo curl-exit=$?";
    await withDroidBox({ grants, fake: { bash } }, async ({ box, start, end }) => {
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

/** A stand-in for Factory's own API as [models] factory_base_url: it records what reaches it. */
function startFactoryStub(): { url: string; paths: string[]; close(): Promise<void> } {
  const paths: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.body?.cancel();
    paths.push(`${req.method} ${new URL(req.url).pathname}`);
    return Response.json({ error: "the stand-in for Factory" }, { status: 500 });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, paths, close: () => server.shutdown() };
}

/** Part of the sentence the box answers a Factory request with when the vault has no key. */
const NO_FACTORY_KEY = "nothing went to Factory";

Deno.test({
  name:
    "Droid's calls to api.factory.ai (settings, usage reports, telemetry) go through the box, which answers them 404 itself with no FACTORY_API_KEY in the vault, and nothing else leaves the task",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    const factory = startFactoryStub();
    try {
      const toml = `factory_base_url = "${factory.url}"\n`;
      await withDroidBox({ grants, toml }, async ({ box, fake, start, end }) => {
        const id = await start("Say hi through the box.");
        const { task, log, journal } = await end(id);
        assertEquals(task.state, "done", log);
        assertStringIncludes(stepTexts(journal).at(-1) ?? "", "hi from droid");

        // Droid's own log (in the task's home): its Factory requests were answered by the box,
        // over https://api.factory.ai, with the box's own sentence.
        const logs = `${box.home}/tasks/${id}/home/.factory/logs`;
        const droidLog = await Deno.readTextFile(`${logs}/droid-log-single.log`);
        const answered = droidLog.split("\n").filter((line) => line.includes(NO_FACTORY_KEY));
        assert(
          answered.some((line) => line.includes("Failed to fetch feature flags")),
          droidLog.slice(0, 4000),
        );
        assert(
          answered.some((line) => line.includes("Failed to record custom model usage")),
          droidLog.slice(0, 4000),
        );
        // Its telemetry too: the OpenTelemetry traces at exit, and its events (console.log).
        assert(
          answered.some((line) => line.includes("OTLPExporterError")),
          droidLog.slice(-4000),
        );
        assert(answered.every((line) => line.includes("404")), answered.join("\n"));
        const consoleLog = await Deno.readTextFile(`${logs}/console.log`);
        assertStringIncludes(consoleLog, "requestUrl: 'https://api.factory.ai/api/ingest'");
        assertStringIncludes(consoleLog, NO_FACTORY_KEY);

        // Nothing reached Factory (the box has no key to send), nothing but model requests
        // reached the model service, and no host was refused: not telemetry.factory.ai, not an
        // OpenTelemetry collector, nothing.
        assertEquals(factory.paths, []);
        for (const request of fake.requests) {
          assert(request.path.startsWith("/v1/messages"), request.path);
        }
        const records = await box.records();
        const blocked = records.filter((r) => r.event?.type === "net_blocked");
        assertEquals(blocked.map((r) => r.event), []);
        assertEquals(
          journal.filter((line) => line.type === "event" && line.event === "net.blocked"),
          [],
        );
      });
    } finally {
      await factory.close();
    }
  },
});

/** Whether the fake has been sent the pending text as a tool's result. */
function sawPending(fake: FakeAnthropic): boolean {
  return fake.messages().some((request) =>
    JSON.stringify(request.body.messages).includes("Call this tool again to check.")
  );
}

for (const answer of ["approve", "refuse"] as const) {
  Deno.test({
    name: answer === "approve"
      ? "an ask grant: Droid's call shows in gurt approvals, it sees the pending text, and gurt approve runs its retried call once"
      : "an ask grant: gurt refuse gives Droid's retried call the refusal text, and the tool never runs",
    ignore: skip !== null,
    fn: async () => {
      const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
      // A short wait, so that the first call answers pending; the fake calls again while it does.
      const toml = "[approvals]\nwait_ms = 3000\n";
      await withDroidBox(
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
            assertStringIncludes(final, "hi from droid");
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
    "a Droid task caught by a gurt serve restart resumes its kept session with -s, and ends done once its call is approved",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
    await withDroidBox(
      { grants, fake: { retries: 8 } },
      async ({ box, fake, cli, start, end }) => {
        const id = await start("Say hi, across a restart.");
        // Droid waits in its call for the owner; the core stops, and starts again.
        await pendingIn(cli, id);
        const before = fake.messages().length;
        await box.restart();
        const approval = await pendingIn(cli, id);
        const approved = await cli(["approve", String(approval)]);
        assertEquals(approved.code, 0, approved.stderr);
        const { task, log, journal } = await end(id);
        assertEquals(task.state, "done", log);
        assertStringIncludes(stepTexts(journal).at(-1) ?? "", "hi from droid");
        // One session, named by Droid's first run and resumed by the second.
        const sessions = stepTexts(journal).filter((text) => text.startsWith("droid session "));
        assertEquals(sessions.length, 1, stepTexts(journal).join("\n"));
        assertStringIncludes(
          log,
          `session ${sessions[0].slice("droid session ".length)} (resumed)`,
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

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
import { grant, type Json } from "../kit/mod.ts";
import {
  type AgentBox,
  agentSkip,
  ASK_TOML,
  askRoundTrip,
  assertBrokeredAndCosted,
  assertKeyNotInTask,
  assertRestartResumes,
  assertShellBlocked,
  BLOCKED_CURL,
  keyProbe,
  stepTexts,
  withAnthropicFakeBox,
} from "./agent_box.ts";
import { type FakeDroidOptions, startFakeAnthropicDroid } from "./fake_anthropic_droid.ts";
import type { FakeAnthropic } from "../../mod/stand-in/anthropic.ts";
import { DROID_DEFAULT_MODEL } from "../../mod/agents/droid.ts";

const skip = agentSkip("droid");
if (skip !== null) console.log(`skipping the Droid tests: ${skip}`);

/** Enough input tokens per answer that a few answers cost whole cents. */
const USAGE = { input_tokens: 100_000, output_tokens: 50 };

/** Runs `work` on a Droid box: the fake as anthropic_base_url, a canary ANTHROPIC_API_KEY. */
async function withDroidBox(
  setup: {
    grants: Record<string, string>;
    fake?: FakeDroidOptions;
    toml?: string;
    key?: string;
    env?: Record<string, string>;
  },
  work: (droid: AgentBox & { fake: FakeAnthropic; key: string }) => Promise<void>,
): Promise<void> {
  const fake = startFakeAnthropicDroid({ usage: USAGE, ...setup.fake });
  await withAnthropicFakeBox("droid", fake, setup, work);
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
    await withDroidBox({ grants }, async (droid) => {
      const { fake, key, start, end } = droid;
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

      // Through the broker, its session the first step and its answer the last, costed, audited.
      await assertBrokeredAndCosted(droid, { id, task, journal }, {
        session: /^droid session [0-9a-f-]{36}$/,
        said: "hi from droid",
      });
      // Droid's stream-json output is on the worker log.
      assertStringIncludes(log, '"type":"completion"');
    });
  },
});

Deno.test({
  name:
    "a Droid task started with no --model under the core's BOX_MODEL asks the model endpoint for that model, and one with --model for its own",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    const env = { BOX_MODEL: "claude-opus-4-5" };
    await withDroidBox({ grants, env }, async ({ fake, start, end }) => {
      const plain = await start("Say hi through the box.");
      assertEquals((await end(plain)).task.state, "done");
      const asked = fake.messages().map((request) => request.body.model);
      assertEquals([...new Set(asked)], ["claude-opus-4-5"]);

      const named = await start("Say hi through the box.", { model: "claude-sonnet-4-6" });
      assertEquals((await end(named)).task.state, "done");
      const after = fake.messages().slice(asked.length).map((request) => request.body.model);
      assertEquals([...new Set(after)], ["claude-sonnet-4-6"]);
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
      async (droid) => {
        // The probe runs through Droid's own shell tool, Execute; the task's folder holds Droid's
        // own logs and sessions.
        await assertKeyNotInTask(droid, key);
        for (const request of droid.fake.requests) {
          assertEquals(request.headers["x-api-key"], key);
        }
        assert(droid.fake.messages().length >= 2);
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
    await withDroidBox({ grants, fake: { bash: BLOCKED_CURL } }, assertShellBlocked);
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

/** What the model was sent, a text a request. */
function sentTo(fake: FakeAnthropic): string[] {
  return fake.messages().map((request) => JSON.stringify(request.body.messages));
}

for (const answer of ["approve", "refuse"] as const) {
  Deno.test({
    name: answer === "approve"
      ? "an ask grant: Droid's call shows in gurt approvals, it sees the pending text, and gurt approve runs its retried call once"
      : "an ask grant: gurt refuse gives Droid's retried call the refusal text, and the tool never runs",
    ignore: skip !== null,
    fn: async () => {
      const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
      await withDroidBox({ grants, toml: ASK_TOML, fake: { retries: 8 } }, async (droid) => {
        const { final } = await askRoundTrip(droid, answer, () => sentTo(droid.fake));
        if (answer === "approve") assertStringIncludes(final, "hi from droid");
      });
    },
  });
}

Deno.test({
  name:
    "a Droid task caught by a gurt serve restart resumes its kept session with -s, and ends done once its call is approved",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
    await withDroidBox({ grants, fake: { retries: 8 } }, async (droid) => {
      await assertRestartResumes(droid, "droid", () => sentTo(droid.fake));
    });
  },
});

/**
 * OpenCode as a task's worker (issue 20): the real opencode-ai 1.18.33 run by `gurt task start
 * --worker opencode` as root against a scripted fake model service, with no internet: its default
 * model gpt-5 over Responses (mod/stand-in/responses.ts as `[models] openai_base_url`), a claude-* model
 * over Messages (mod/stand-in/anthropic.ts as anthropic_base_url), and any other over Chat Completions
 * (mod/stand-in/chat.ts, whose `shell` option calls OpenCode's bash tool). It lists the box's tools and
 * calls example.echo through the broker; its final answer and exit end the task; the vault's key
 * reaches the fake and never the task; an `ask` grant's call waits for the owner; its own shell
 * cannot reach a host off the task's list; and nothing else leaves the task.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, type Json, type TestBox } from "../kit/mod.ts";
import {
  type AgentBox,
  agentSkip,
  ASK_TOML,
  askRoundTrip,
  assertBrokeredAndCosted,
  assertKeyNotInTask,
  assertRestartResumes,
  BLOCKED_CURL,
  keyProbe,
  runBlockedCurl,
  stepTexts,
  withAgentBox,
} from "./agent_box.ts";
import { type FakeResponsesOptions, startFakeResponses } from "../../mod/stand-in/responses.ts";
import { type FakeChatOptions, isTitleRequest, startFakeChat } from "../../mod/stand-in/chat.ts";
import { type FakeAnthropicOptions, startFakeAnthropic } from "../../mod/stand-in/anthropic.ts";
import { OPENCODE_DEFAULT_MODEL, OPENCODE_RESUME_PROMPT } from "../../mod/agents/opencode.ts";

const skip = agentSkip("opencode");
if (skip !== null) console.log(`skipping the OpenCode tests: ${skip}`);

/** A model OpenCode speaks Chat Completions to (the endpoint's OpenAI-compatible target). */
const CHAT_MODEL = "qwen3-coder";

/** The final answer after the echo call: the box's result, as the fakes answer it. */
const FINAL_ECHO = 'FINAL: {"text":"hi from opencode"}';

/** One model request as a fake received it, whatever its wire. */
interface ModelRequest {
  path: string;
  headers: Record<string, string>;
  body: Json;
}

/** The fake behind the task, seen the same way on every wire. */
interface Fake {
  url: string;
  /** Every request it received (any path). */
  all(): { path: string; headers: Record<string, string> }[];
  /** The model requests (responses, chat/completions or messages), bodies parsed. */
  model(): ModelRequest[];
  /** The header that carried the key, and its value for `key`. */
  keyHeader: [string, (key: string) => string];
  close(): Promise<void>;
}

type Wire =
  | { wire: "responses"; options?: Partial<FakeResponsesOptions> }
  | { wire: "chat"; options?: Partial<FakeChatOptions> }
  | { wire: "anthropic"; options?: FakeAnthropicOptions };

function startFake(wire: Wire): Fake {
  const bearer: Fake["keyHeader"] = ["authorization", (key) => `Bearer ${key}`];
  if (wire.wire === "anthropic") {
    const fake = startFakeAnthropic({ agent: "opencode", ...wire.options });
    return {
      url: fake.url,
      all: () => fake.requests,
      model: () => fake.messages(),
      keyHeader: ["x-api-key", (key) => key],
      close: () => fake.close(),
    };
  }
  const fake = wire.wire === "responses"
    ? startFakeResponses({ agent: "opencode", ...wire.options })
    : startFakeChat({ agent: "opencode", ...wire.options });
  const path = wire.wire === "responses" ? /\/responses$/ : /\/chat\/completions$/;
  return {
    url: fake.url,
    all: () => fake.requests,
    model: () =>
      fake.requests
        .filter((request) => request.method === "POST" && path.test(request.path))
        .map((request) => ({ ...request, body: JSON.parse(request.body) })),
    keyHeader: bearer,
    close: () => fake.close(),
  };
}

/** Runs `work` on an OpenCode box: the fake in `[models]`, a canary key in the vault. */
async function withOpencodeBox(
  setup: { grants: Record<string, string>; fake?: Wire; toml?: string; key?: string },
  work: (opencode: AgentBox & { fake: Fake; key: string }) => Promise<void>,
): Promise<void> {
  const wire = setup.fake ?? { wire: "responses" };
  const anthropic = wire.wire === "anthropic";
  const key = setup.key ??
    `${anthropic ? "sk-ant" : "sk-proj"}-canary-${crypto.randomUUID().slice(0, 12)}`;
  const fake = startFake(wire);
  try {
    await withAgentBox({
      agent: "opencode",
      grants: setup.grants,
      vault: { [anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY"]: key },
      toml: `[models]\n${anthropic ? "anthropic" : "openai"}_base_url = "${fake.url}"\n${
        setup.toml ?? ""
      }`,
    }, (box) => work({ ...box, fake, key }));
  } finally {
    await fake.close();
  }
}

/** The names of the tools a model request offered, on any wire. */
function toolNames(body: Json): string[] {
  return ((body.tools ?? []) as Json[]).map((tool) => String(tool.function?.name ?? tool.name));
}

/** Every request reached the fake with the vault's key, put on by the model endpoint. */
function assertKeyed(fake: Fake, key: string): void {
  const [header, value] = fake.keyHeader;
  assert(fake.all().length > 0);
  for (const request of fake.all()) assertEquals(request.headers[header], value(key));
}

/** The net_blocked records of task `id`'s, and its journal's net.blocked events. */
async function blockedOf(box: TestBox, id: string, journal: Json[]): Promise<Json[]> {
  const records = (await box.records()).filter((r) =>
    r.event?.type === "net_blocked" && r.event.task === id
  ).map((r) => r.event);
  const events = journal.filter((line) => line.type === "event" && line.event === "net.blocked");
  return [...records, ...events];
}

/** Nothing left the task: no host refused (OpenCode's catalog, update check, plugin install …). */
async function assertNothingBlocked(box: TestBox, id: string, journal: Json[]): Promise<void> {
  assertEquals(await blockedOf(box, id, journal), []);
  const all = (await box.records()).filter((r) => r.event?.type === "net_blocked");
  assertEquals(all.map((r) => r.event), []);
}

Deno.test({
  name:
    "gurt task start --worker opencode: OpenCode on gpt-5 lists the box's tools, calls example.echo through the broker, and its final answer ends the task done, costed and audited, with nothing else leaving",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    await withOpencodeBox({ grants }, async (opencode) => {
      const { box, fake, key, start, end } = opencode;
      const id = await start("Say hi through the box.");
      const { task, log, journal } = await end(id);
      assertEquals(task.state, "done", log);

      // The prompt reached it, and the box's tools were offered to the model as box_<tool>.
      const requests = fake.model();
      const turn = requests.find((request) => toolNames(request.body).length > 0);
      assert(turn !== undefined, JSON.stringify(requests.map((r) => r.body)));
      assertStringIncludes(JSON.stringify(turn.body.input), "Say hi through the box.");
      const tools = toolNames(turn.body);
      assert(tools.includes("box_example__echo"), tools.join(", "));
      assert(tools.includes("box_box_ask"), tools.join(", "));
      for (const request of requests) assertEquals(request.body.model, OPENCODE_DEFAULT_MODEL);
      assertKeyed(fake, key);

      // Through the broker, its session kept as a step (the first) and its answer the last,
      // costed, audited.
      await assertBrokeredAndCosted(opencode, { id, task, journal }, {
        session: /^opencode session ses_\w+$/,
        said: "hi from opencode",
      });
      assertEquals(stepTexts(journal).at(-1), FINAL_ECHO);
      // OpenCode's JSON events are on the worker log.
      assertStringIncludes(log, '"type":"tool_use"');
      assertStringIncludes(log, '"tool":"box_example__echo"');

      // Nothing but model requests reached the model service, and no host was refused: not the
      // models catalog, the update check, the plugin install from npm, nor anything else.
      for (const request of fake.all()) assert(request.path.endsWith("/responses"), request.path);
      await assertNothingBlocked(box, id, journal);
    });
  },
});

Deno.test({
  name:
    "an OpenCode task on a claude-* model speaks Messages through the box with the vault's Anthropic key, and on any other model Chat Completions with the OpenAI key",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    for (
      const [fake, model, path] of [
        [{ wire: "anthropic" }, "claude-sonnet-4-5", /^\/v1\/messages(\?|$)/],
        [{ wire: "chat" }, CHAT_MODEL, /^\/v1\/chat\/completions$/],
      ] as const
    ) {
      await withOpencodeBox({ grants, fake }, async ({ box, fake, key, cli, start, end }) => {
        const id = await start("Say hi through the box.", { model });
        const { task, log, journal } = await end(id);
        assertEquals(task.state, "done", log);
        assertEquals(stepTexts(journal).at(-1), FINAL_ECHO);
        const requests = fake.model();
        assert(requests.length >= 2, JSON.stringify(fake.all().map((r) => r.path)));
        for (const request of requests) {
          assert(path.test(request.path), request.path);
          assertEquals(request.body.model, model);
        }
        const offered = toolNames(requests.at(-1)!.body);
        assert(offered.includes("box_example__echo"), offered.join(", "));
        assertKeyed(fake, key);
        if (fake.keyHeader[0] === "authorization") {
          // The title request comes first, with no tools.
          assert(isTitleRequest(requests[0].body), JSON.stringify(requests[0].body));
        }
        const shown = await cli(["task", "show", id]);
        assertStringIncludes(shown.stdout, "cost ");
        assert(task.spentCents > 0, JSON.stringify(task));
        await assertNothingBlocked(box, id, journal);
      });
    }
  },
});

Deno.test({
  name:
    "the vault's key reaches the fake service from an OpenCode task and never the task: no task process's environment, no file of its home or /tmp, not its log",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    const key = `sk-proj-canary-${crypto.randomUUID().slice(0, 12)}`;
    await withOpencodeBox(
      { grants, key, fake: { wire: "chat", options: { shell: keyProbe(key) } } },
      async (opencode) => {
        const { box, fake } = opencode;
        // The probe runs through OpenCode's own shell tool, bash; the task's folder holds
        // OpenCode's sessions database and logs.
        const { id, journal } = await assertKeyNotInTask(opencode, key, { model: CHAT_MODEL });
        assertKeyed(fake, key);
        assert(fake.model().length >= 2);
        assert(
          Deno.statSync(`${box.home}/tasks/${id}/home/.local/share/opencode/opencode.db`).isFile,
        );
        await assertNothingBlocked(box, id, journal);
      },
    );
  },
});

Deno.test({
  name:
    "OpenCode's own shell tool (bash) in a task cannot reach a host off the task's list, and the attempt shows as net.blocked, the only host refused",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    await withOpencodeBox(
      { grants, fake: { wire: "chat", options: { shell: BLOCKED_CURL } } },
      async (opencode) => {
        const { id, journal } = await runBlockedCurl(opencode, { model: CHAT_MODEL });
        const blocked = await blockedOf(opencode.box, id, journal);
        assert(blocked.length >= 2, JSON.stringify(journal));
        for (const line of blocked) {
          assertStringIncludes(JSON.stringify(line), "blocked.example.com");
        }
      },
    );
  },
});

for (const answer of ["approve", "refuse"] as const) {
  Deno.test({
    name: answer === "approve"
      ? "an ask grant: OpenCode's call shows in gurt approvals, it sees the pending text, and gurt approve runs its retried call once"
      : "an ask grant: gurt refuse gives OpenCode's retried call the refusal text, and the tool never runs",
    ignore: skip !== null,
    fn: async () => {
      const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
      await withOpencodeBox(
        { grants, toml: ASK_TOML, fake: { wire: "responses", options: { retries: 8 } } },
        async (opencode) => {
          // The pending text is looked for in each request's whole body.
          const sent = () => opencode.fake.model().map((request) => JSON.stringify(request.body));
          const { id, final, journal } = await askRoundTrip(opencode, answer, sent);
          if (answer === "approve") assertEquals(final, FINAL_ECHO);
          await assertNothingBlocked(opencode.box, id, journal);
        },
      );
    },
  });
}

Deno.test({
  name:
    "an OpenCode task caught by a gurt serve restart resumes its kept session with -s, and ends done once its call is approved",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo", mode: "ask" }) };
    await withOpencodeBox(
      { grants, fake: { wire: "responses", options: { retries: 8 } } },
      async (opencode) => {
        // Named by OpenCode's first run and resumed by the second; the resumed conversation is
        // told so in OPENCODE_RESUME_PROMPT's words (JSON-escaped in the request's input).
        await assertRestartResumes(
          opencode,
          "opencode",
          () => opencode.fake.model().map((request) => JSON.stringify(request.body.input)),
          JSON.stringify(OPENCODE_RESUME_PROMPT).slice(1, -1),
        );
      },
    );
  },
});

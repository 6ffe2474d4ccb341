/**
 * Claude Code's own permission prompts become the owner's approvals (issue 20): the real npm CLI,
 * run by `gurt task start --worker claude` as root against the scripted fake Anthropic service,
 * is told by the model to use WebFetch, which it would ask its user about. The prompt goes to
 * `gurt mcp`'s box_permission and shows in `gurt approvals` as the task's question; the model is
 * told to call again while the owner has not answered; `gurt approve` lets the fetch go on, and
 * `gurt refuse --reason` gives the model the refusal with the reason.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, type GurtRun, type Json, until } from "../kit/mod.ts";
import { claudeSkip, stepTexts, withClaudeBox } from "./claude_box.ts";
import type { FakeAnthropic } from "../../mod/stand-in/anthropic.ts";

const skip = claudeSkip();
if (skip !== null) console.log(`skipping the Claude Code permission tests: ${skip}`);

/** The fetch the model asks for: a host off the task's list. */
const FETCH = { url: "https://docs.example.com/guide", prompt: "Summarise the install steps" };

const QUESTION =
  'Claude Code asks to use WebFetch with {"url":"https://docs.example.com/guide","prompt":"Summarise the install steps"}';

/** Waits for the task's question in `gurt approvals`; its approval number. */
async function questionIn(cli: (args: string[]) => Promise<GurtRun>, id: string): Promise<number> {
  let approval = -1;
  await until(async () => {
    const shown = await cli(["approvals"]);
    // Two lines each: the number, age, expiry and task; then the tool and its arguments.
    const block = new RegExp(`^(\\d+) .*task ${id}.*\\n\\s+box\\.ask (.*)$`, "m").exec(
      shown.stdout,
    );
    if (block !== null && block[2].includes("Claude Code asks to use WebFetch")) {
      approval = Number(block[1]);
    }
    return approval !== -1;
  }, 40_000);
  return approval;
}

/** The text of every WebFetch tool result the fake was sent, in order. */
function fetchResults(fake: FakeAnthropic): string[] {
  const last = fake.messages().at(-1)?.body.messages as Json[] | undefined;
  const fetches = new Set<string>();
  const texts: string[] = [];
  for (const message of last ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block?.type === "tool_use" && block.name === "WebFetch") fetches.add(block.id);
      if (block?.type === "tool_result" && fetches.has(block.tool_use_id)) {
        texts.push(JSON.stringify(block.content));
      }
    }
  }
  return texts;
}

Deno.test({
  name:
    "Claude Code's WebFetch prompt shows in gurt approvals as its task's question, the model is told to call again while it waits, and gurt approve lets the fetch go on",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    // A short wait, so that the first prompt answers pending; the model calls WebFetch again.
    const toml = "[approvals]\nwait_ms = 3000\n";
    await withClaudeBox(
      { grants, toml, fake: { tool: { name: "WebFetch", input: FETCH }, retries: 8 } },
      async ({ box, fake, cli, start, end }) => {
        const id = await start("Read the guide.");
        const approval = await questionIn(cli, id);
        const shown = await cli(["approvals"]);
        assertStringIncludes(shown.stdout, QUESTION.replaceAll('"', '\\"'));
        // The model was told the owner has not answered, naming the approval, and to call again.
        await until(
          () =>
            Promise.resolve(
              fetchResults(fake).some((text) => text.includes(`(approval ${approval})`)),
            ),
          40_000,
        );
        assertStringIncludes(fetchResults(fake)[0], "Call this tool again to check.");
        const approved = await cli(["approve", String(approval)]);
        assertEquals(approved.code, 0, approved.stderr);

        const { task, log, journal } = await end(id);
        assertEquals(task.state, "done", log);
        // One question, approved; the calls again joined it.
        const asks = journal.filter((line) => line.type === "ask");
        assertEquals(asks.map((line) => [line.question, line.approval]), [[QUESTION, approval]]);
        const answers = journal.filter((line) => line.type === "ask.answer");
        assertEquals(answers.map((line) => line.approved), [true]);
        // WebFetch ran: its result is its own, not a refusal, and its fetch of a host off the
        // task's list went to the task's egress proxy, which blocked it.
        const last = fetchResults(fake).at(-1) ?? "";
        assert(!last.includes("box owner"), last);
        const final = stepTexts(journal).at(-1) ?? "";
        assertStringIncludes(final, "FINAL: ");
        assert(!final.includes("box owner"), final);
        // (WebFetch tells the model the proxy refused the connection.)
        assertStringIncludes(last, "refused the connection");
        const records = await box.records();
        assert(
          records.some((r) =>
            r.event?.type === "net_blocked" && r.event.task === id &&
            r.event.host === "docs.example.com"
          ),
          JSON.stringify(records.map((r) => r.event)),
        );
        const verified = await cli(["audit", "verify"]);
        assertEquals(verified.code, 0, verified.stdout + verified.stderr);
      },
    );
  },
});

Deno.test({
  name:
    "gurt refuse --reason on Claude Code's WebFetch prompt gives the model the refusal with the reason, and nothing is fetched",
  ignore: skip !== null,
  fn: async () => {
    const grants = { echo: grant({ tool: "example.echo" }) };
    await withClaudeBox(
      { grants, fake: { tool: { name: "WebFetch", input: FETCH } } },
      async ({ box, cli, start, end }) => {
        const id = await start("Read the guide.");
        const approval = await questionIn(cli, id);
        const refused = await cli(["refuse", String(approval), "--reason", "use the local docs"]);
        assertEquals(refused.code, 0, refused.stderr);
        const { task, log, journal } = await end(id);
        assertEquals(task.state, "done", log);
        const final = stepTexts(journal).at(-1) ?? "";
        assertStringIncludes(
          final,
          "FINAL: The box owner refused this use of WebFetch: use the local docs",
        );
        const answers = journal.filter((line) => line.type === "ask.answer");
        assertEquals(answers.map((line) => [line.approved, line.reason]), [[
          false,
          "use the local docs",
        ]]);
        const records = await box.records();
        assert(
          !records.some((r) => r.event?.type === "net_blocked" && r.event.task === id),
          JSON.stringify(records.map((r) => r.event)),
        );
      },
    );
  },
});

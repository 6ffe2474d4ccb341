/**
 * Droid's own questions to its user become the owner's approvals (seed 003): the real droid
 * 0.215.0, run by `gurt task start --worker droid` as root against the scripted fake Anthropic
 * service. `droid exec` offers the model no AskUser, so the box's server offers box_ask_user in
 * its place; the fake model, once ToolSearch has loaded the box's tools, asks its questionnaire
 * there. The question shows in `gurt approvals` as the task's, the model is told to call again while
 * the owner has not answered, and the owner's answer (yes, or no with their words) is what the
 * model gets, and its final answer.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { grant, type Json, until } from "../kit/mod.ts";
import { agentSkip, ASK_TOML, stepTexts, withAnthropicFakeBox } from "./agent_box.ts";
import { startFakeAnthropicDroid } from "./fake_anthropic_droid.ts";

const skip = agentSkip("droid");
if (skip !== null) console.log(`skipping the Droid AskUser tests: ${skip}`);

const QUESTIONNAIRE = `1. [question] Which greeting should I send?
[topic] Greeting
[option] hi
[option] hello`;

/** The number of the task's pending box.ask approval whose question is Droid's, from gurt approvals. */
async function droidQuestion(
  cli: (args: string[]) => Promise<{ stdout: string }>,
  id: string,
): Promise<{ approval: number; shown: string }> {
  let approval = -1;
  let shown = "";
  await until(async () => {
    shown = (await cli(["approvals"])).stdout;
    const block = new RegExp(`^(\\d+) .*task ${id}[^\\n]*\\n[^\\n]*Droid asks you`, "m").exec(
      shown,
    );
    if (block !== null) approval = Number(block[1]);
    return approval !== -1;
  }, 40_000);
  return { approval, shown };
}

for (const answer of ["approve", "refuse"] as const) {
  Deno.test({
    name: answer === "approve"
      ? "Droid's question to its user (box_ask_user, in AskUser's place) shows in gurt approvals, and gurt approve gives the model yes"
      : "gurt refuse --reason gives Droid's question the owner's no and words, and the task goes on to its end",
    ignore: skip !== null,
    fn: async () => {
      const fake = startFakeAnthropicDroid({
        usage: { input_tokens: 1_000, output_tokens: 50 },
        retries: 8,
        tool: { name: "box___box_ask_user", input: { questionnaire: QUESTIONNAIRE } },
      });
      const grants = { echo: grant({ tool: "example.echo" }) };
      await withAnthropicFakeBox("droid", fake, { grants, toml: ASK_TOML }, async (droid) => {
        const id = await droid.start("Greet the owner, asking first how.");
        const { approval, shown } = await droidQuestion(droid.cli, id);
        assertStringIncludes(shown, "Which greeting should I send?");
        // The model was told to call again while the owner had not answered.
        await until(
          () =>
            Promise.resolve(
              fake.messages().some((r) =>
                JSON.stringify(r.body.messages).includes(`(approval ${approval}). Call this tool`)
              ),
            ),
          40_000,
        );
        const words = answer === "approve" ? [] : ["--reason", "say hello"];
        const done = await droid.cli([answer, String(approval), ...words]);
        assertEquals(done.code, 0, done.stderr);

        const { task, log, journal } = await droid.end(id);
        assertEquals(task.state, "done", log);
        const final = stepTexts(journal).at(-1) ?? "";
        if (answer === "approve") assertStringIncludes(final, "FINAL: The box owner answered yes");
        else assertStringIncludes(final, "FINAL: The box owner answered no, and wrote: say hello");
        // One approval, the box's ask, answered as the owner said; the model saw the system
        // prompt that names box_ask_user.
        const records = await droid.box.records();
        const asks = records.filter((r: Json) =>
          r.event?.type === "decision" && r.event.tool === "box.ask"
        );
        assertEquals(asks.length, 1, JSON.stringify(asks.map((r: Json) => r.event)));
        const system = JSON.stringify(fake.messages()[0].body.system);
        assert(system.includes("box___box_ask_user"), system.slice(0, 2000));
      });
    },
  });
}

/**
 * `gurt mcp --ask-user-tool`'s box_ask_user: Droid's AskUser questionnaire (which `droid exec`
 * does not offer) becomes the owner's /ask approval. The owner sees the questionnaire as the task's
 * question in `gurt approvals`; approved, the model is told yes; refused with a reason, no and the
 * owner's words; still waiting when the wait ends, to call again, and the call again joins the same
 * approval. Without the option the tool is not listed. The official SDK's client over stdio, a real
 * core's task socket.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt, type Json, pendingApproval } from "../kit/mod.ts";
import { textOf, withRelay } from "./relay_kit.ts";

const QUESTIONNAIRE = `1. [question] Which library should we use for date formatting?
[topic] Library
[option] Library ABC
[option] Library BlaBla`;

const ask = (questionnaire = QUESTIONNAIRE) => ({
  name: "box_ask_user",
  arguments: { questionnaire },
});

Deno.test("gurt mcp lists box_ask_user, read-only with AskUser's input, only with --ask-user-tool", async () => {
  await withRelay(["mcp", "--ask-user-tool"], async (_box, client) => {
    const tools = (await client.listTools()).tools as Json[];
    const tool = tools.find((t) => t.name === "box_ask_user");
    assert(tool !== undefined, JSON.stringify(tools.map((t) => t.name)));
    assertEquals(tool.annotations.readOnlyHint, true);
    assertEquals(tool.inputSchema.required, ["questionnaire"]);
    assertStringIncludes(tool.description, "AskUser");
  });
  await withRelay(["mcp"], async (_box, client) => {
    const names = ((await client.listTools()).tools as Json[]).map((t) => t.name);
    assertEquals(names.includes("box_ask_user"), false, names.join(", "));
    // Called anyway, it is a tool the task lacks.
    const called = textOf(await client.callTool(ask()));
    assertStringIncludes(called, "Denied");
  });
});

Deno.test("box_ask_user: the owner sees the questionnaire in gurt approvals, and gurt approve tells the model yes", async () => {
  await withRelay(["mcp", "--ask-user-tool"], async (box, client, task) => {
    const answer = client.callTool(ask());
    const id = await pendingApproval(box, task as Json, 10_000);
    const [item] = (await box.admin("GET", "/approvals")).body.items as Json[];
    assertEquals([item.task, item.tool, item.kind], [task.id, "box.ask", "ask"]);
    assertEquals(
      JSON.parse(item.arguments).question,
      "Droid asks you (approve: yes, the first option of each question; refuse --reason: no, " +
        "with your answer): 1. [question] Which library should we use for date formatting? / " +
        "[topic] Library / [option] Library ABC / [option] Library BlaBla",
    );
    const shown = await gurt(["approvals"], { env: { BOX_HOME: box.home } });
    assertStringIncludes(shown.stdout, `task ${task.id}`);
    assertStringIncludes(shown.stdout, "Droid asks you");
    const approved = await gurt(["approve", String(id)], { env: { BOX_HOME: box.home } });
    assertEquals(approved.code, 0, approved.stderr);
    assertStringIncludes(textOf(await answer), "The box owner answered yes");
  });
});

Deno.test("box_ask_user: still waiting when its wait ends it says to call again, the call again joins the approval, and gurt refuse --reason gives the model no and the owner's words", async () => {
  await withRelay(["mcp", "--ask-user-tool", "--wait-ms", "300"], async (box, client, task) => {
    const first = textOf(await client.callTool(ask()));
    const id = await pendingApproval(box, task as Json, 10_000);
    assertEquals(
      first,
      `Waiting for the box owner to answer (approval ${id}). Call this tool again with the same questionnaire to check.`,
    );
    const again = textOf(await client.callTool(ask()));
    assertStringIncludes(again, `(approval ${id})`);
    assertEquals(((await box.admin("GET", "/approvals")).body.items as Json[]).length, 1);
    const refused = await gurt(["refuse", String(id), "--reason", "Library BlaBla, please"], {
      env: { BOX_HOME: box.home },
    });
    assertEquals(refused.code, 0, refused.stderr);
    assertEquals(
      textOf(await client.callTool(ask())),
      "The box owner answered no, and wrote: Library BlaBla, please",
    );
    // An empty questionnaire asks nobody.
    assertStringIncludes(textOf(await client.callTool(ask(" "))), "questionnaire must be");
    assertEquals((await box.admin("GET", "/approvals")).body.items, []);
  });
});

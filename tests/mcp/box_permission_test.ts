/**
 * `gurt mcp`'s box_permission: Claude Code's own permission prompts (`--permission-prompt-tool
 * mcp__box__box_permission`, called with {tool_name, input, tool_use_id}) become the owner's /ask
 * approvals. Approved, it answers Claude's allow (the input unchanged); refused, a deny with the
 * owner's reason; still waiting when its wait ends, a deny naming the approval and saying to call
 * again, and the call again joins that approval.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurt, type Json, pendingApproval, type TestBox } from "../kit/mod.ts";
import { withRelay } from "./relay_kit.ts";

type ToolResult = { content: { type: string; text: string }[]; isError?: boolean };

/** The decision box_permission answered, parsed from its one text. */
function decisionOf(result: unknown): Json {
  const { content, isError } = result as ToolResult;
  assertEquals(isError, undefined, JSON.stringify(result));
  assertEquals(content.length, 1);
  return JSON.parse(content[0].text);
}

const FETCH = {
  url: "https://docs.example.com/guide",
  prompt: "Summarise the install steps",
};

/** A prompt as Claude Code sends it. */
function prompt(toolName: string, input: unknown, id = "toolu_01") {
  return { name: "box_permission", arguments: { tool_name: toolName, input, tool_use_id: id } };
}

/**
 * Runs `work` with a box (wait_ms 60 s) and a `gurt mcp --wait-ms N --permission-tool` client on a
 * task, closed afterwards.
 */
function withPermissionRelay(
  waitMs: number,
  work: (box: TestBox, client: Client, task: { id: string }) => Promise<void>,
): Promise<void> {
  return withRelay(["mcp", "--wait-ms", String(waitMs), "--permission-tool"], work);
}

/** The pending approvals of the box, as the admin socket lists them. */
async function approvals(box: TestBox): Promise<Json[]> {
  return (await box.admin("GET", "/approvals")).body.items;
}

Deno.test("gurt mcp --permission-tool lists box_permission, not read-only, for the agent's own permission prompts", async () => {
  await withPermissionRelay(300, async (_box, client) => {
    const tools = (await client.listTools()).tools as Json[];
    const tool = tools.find((t) => t.name === "box_permission");
    assert(tool !== undefined, JSON.stringify(tools.map((t) => t.name)));
    assertEquals(tool.annotations.readOnlyHint, false);
    assertStringIncludes(tool.description, "permission");
    assertEquals(tool.inputSchema.required, ["tool_name", "input"]);
  });
});

Deno.test("box_permission: the owner sees the agent's tool and input as the task's question, and gurt approve answers allow with the input unchanged", async () => {
  await withPermissionRelay(30_000, async (box, client, task) => {
    const answer = client.callTool(prompt("WebFetch", FETCH));
    const id = await pendingApproval(box, task as Json, 10_000);
    const [item] = await approvals(box);
    assertEquals([item.task, item.tool, item.kind], [task.id, "box.ask", "ask"]);
    const question = JSON.parse(item.arguments).question;
    assertEquals(
      question,
      'Claude Code asks to use WebFetch with {"url":"https://docs.example.com/guide","prompt":"Summarise the install steps"}',
    );
    // The owner's own command shows it as the task's question.
    const shown = await gurt(["approvals"], { env: { BOX_HOME: box.home } });
    assertStringIncludes(shown.stdout, `task ${task.id}`);
    assertStringIncludes(shown.stdout, "Claude Code asks to use WebFetch");
    const approved = await gurt(["approve", String(id)], { env: { BOX_HOME: box.home } });
    assertEquals(approved.code, 0, approved.stderr);
    assertEquals(decisionOf(await answer), { behavior: "allow", updatedInput: FETCH });
  });
});

Deno.test("box_permission: gurt refuse --reason answers deny with the owner's reason, also to the prompt asked again after a pending answer", async () => {
  await withPermissionRelay(300, async (box, client, task) => {
    // The wait ends first: the agent is told to call again.
    const first = decisionOf(await client.callTool(prompt("WebSearch", { query: "gurt" })));
    const id = await pendingApproval(box, task as Json, 10_000);
    assertEquals(first.behavior, "deny");
    const refused = await gurt(["refuse", String(id), "--reason", "no searching today"], {
      env: { BOX_HOME: box.home },
    });
    assertEquals(refused.code, 0, refused.stderr);
    // Called again (a new tool_use_id, the same tool and input): the refusal, with the reason.
    const again = decisionOf(
      await client.callTool(prompt("WebSearch", { query: "gurt" }, "toolu_02")),
    );
    assertEquals(again.behavior, "deny");
    assertStringIncludes(again.message, "refused");
    assertStringIncludes(again.message, "WebSearch");
    assertStringIncludes(again.message, "no searching today");
    assertEquals(await approvals(box), []);
  });
});

Deno.test("box_permission: refused while the prompt waits, the deny comes at once with the owner's reason", async () => {
  await withPermissionRelay(30_000, async (box, client, task) => {
    const waiting = client.callTool(prompt("WebFetch", FETCH));
    const id = await pendingApproval(box, task as Json, 10_000);
    await box.admin("POST", `/approvals/${id}/refuse`, { reason: "not that site" });
    const denied = decisionOf(await waiting);
    assertEquals(denied.behavior, "deny");
    assertStringIncludes(denied.message, "WebFetch");
    assertStringIncludes(denied.message, "not that site");
  });
});

Deno.test("box_permission: a prompt still waiting when its wait ends answers deny naming the approval and to call again; the call again joins it, and a later use asks afresh", async () => {
  await withPermissionRelay(300, async (box, client, task) => {
    const started = performance.now();
    const pending = decisionOf(await client.callTool(prompt("WebFetch", FETCH)));
    const waited = performance.now() - started;
    assert(waited >= 300 && waited < 10_000, `it waited ${waited} ms`);
    const id = await pendingApproval(box, task as Json, 10_000);
    assertEquals(pending.behavior, "deny");
    assertStringIncludes(pending.message, `approval ${id}`);
    assertStringIncludes(pending.message, "Call this tool again");
    assertEquals(pending.updatedInput, undefined);

    const again = decisionOf(await client.callTool(prompt("WebFetch", FETCH, "toolu_02")));
    assertStringIncludes(again.message, `approval ${id}`);
    assertEquals((await approvals(box)).length, 1, "the call again joined the same approval");

    await box.admin("POST", `/approvals/${id}/approve`);
    const allowed = decisionOf(await client.callTool(prompt("WebFetch", FETCH, "toolu_03")));
    assertEquals(allowed, { behavior: "allow", updatedInput: FETCH });

    // Once answered, the same use later is a new prompt: the owner is asked again.
    const later = decisionOf(await client.callTool(prompt("WebFetch", FETCH, "toolu_04")));
    assertEquals(later.behavior, "deny");
    const next = await pendingApproval(box, task as Json, 10_000);
    assert(next !== id, `the later use asked approval ${next} again`);
    assertStringIncludes(later.message, `approval ${next}`);
  });
});

Deno.test("box_permission's question is bounded and escaped: a long input is cut with a count, control and direction characters show as \\u escapes, an odd tool name is quoted", async () => {
  await withPermissionRelay(300, async (box, client, task) => {
    const input = {
      command: `echo \u202eevil\u0007 ${"x".repeat(5000)}`,
      note: "line\u2028two\u0085",
    };
    const decision = decisionOf(await client.callTool(prompt('Bash"\n\u001b[31m', input)));
    assertEquals(decision.behavior, "deny");
    await pendingApproval(box, task as Json, 10_000);
    const [item] = await approvals(box);
    const question: string = JSON.parse(item.arguments).question;
    assert(question.length < 1200, `${question.length} characters`);
    assert(question.startsWith('Claude Code asks to use "Bash\\"\\n\\u001b[31m" with '), question);
    assertStringIncludes(question, "\\u202eevil\\u0007");
    assert(/… \(\d+ more characters\)$/.test(question), question);
    // No character that could hide text is left as it is: controls, separators, direction marks.
    assert(!/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(question), question);
  });
});

Deno.test("box_permission answers deny, not an error, to a prompt without a tool name or with an input that is not an object", async () => {
  await withPermissionRelay(300, async (box, client) => {
    for (
      const args of [
        { input: {} },
        { tool_name: "", input: {} },
        { tool_name: "WebFetch", input: "https://x" },
      ]
    ) {
      const decision = decisionOf(
        await client.callTool({ name: "box_permission", arguments: args }),
      );
      assertEquals(decision.behavior, "deny", JSON.stringify(args));
      assertStringIncludes(decision.message, "tool_name");
    }
    assertEquals(await approvals(box), []);
  });
});

Deno.test("gurt mcp without --permission-tool lists no box_permission, and a call of it is answered as any tool the task does not have, asking the owner nothing", async () => {
  await withRelay(["mcp", "--wait-ms", "300"], async (box, client) => {
    const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
    assertEquals(tools.sort(), ["box_ask", "example__echo"]);
    const asked = await client.callTool(prompt("WebFetch", FETCH));
    const unknown = await client.callTool({
      name: "box_nothing",
      arguments: { tool_name: "WebFetch", input: FETCH },
    });
    // The same answer but for the name, which the task is told is not one of its tools.
    const text = (result: unknown) => (result as ToolResult).content[0].text;
    assertEquals(text(unknown), text(asked).replace('"box_permission"', '"box_nothing"'));
    assertStringIncludes(text(asked), 'Denied: "box_permission" is not one of this task\'s tools');
    assertEquals(await approvals(box), []);
  });
});

Deno.test("gurt mcp takes --permission-tool before or after --wait-ms, in the light start and in the full CLI", async () => {
  for (
    const words of [
      ["mcp", "--permission-tool", "--wait-ms", "300"],
      ["mcp", "--permission-tool", "--wait-ms=300"],
      ["mcp", "--permission-tool"],
      // A word before `mcp` is not the light start's: commander parses this one.
      ["--home", "/nonexistent", "mcp", "--wait-ms", "300", "--permission-tool"],
    ]
  ) {
    await withRelay(words, async (_box, client) => {
      const tools = (await client.listTools()).tools.map((t: { name: string }) => t.name);
      assertEquals(tools.sort(), ["box_ask", "box_permission", "example__echo"], words.join(" "));
    });
  }
  const help = await gurt(["mcp", "--help"]);
  assertStringIncludes(help.stdout, "--permission-tool");
});

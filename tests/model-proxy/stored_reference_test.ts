/**
 * What the model service keeps for the owner's account is not the task's to name (issue 36's
 * service-side references): a Responses request that names a stored prompt (which can carry hosted
 * tools), an earlier response, a conversation or a stored item, or whose tool_choice forces a
 * hosted tool, is refused with a 403 and a blocked event, and nothing reaches the service. What the
 * agents are seen to send (Codex, OpenCode: the whole input, `store: false`, `tool_choice: "auto"`)
 * passes. Each refusal fails on the code before it: the body check let it through.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { withProxy } from "./proxy_kit.ts";

type Fields = Record<string, unknown>;

/** A Responses body as Codex sends it (mod/stand-in/responses.ts saw these keys), plus `more`. */
function codexBody(more: Fields = {}): Fields {
  return {
    model: "gpt-5-codex",
    instructions: "You are Codex.",
    input: [
      { type: "message", role: "developer", content: [{ type: "input_text", text: "rules" }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "say hi" }] },
      { type: "function_call", call_id: "call_1", name: "shell", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "hi" },
    ],
    tools: [{ type: "function", name: "shell", parameters: { type: "object" } }],
    tool_choice: "auto",
    parallel_tool_calls: false,
    reasoning: { effort: "medium", summary: "auto" },
    store: false,
    stream: false,
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
    max_output_tokens: 1000,
    ...more,
  };
}

const REFUSED: { name: string; body: Fields; at: string }[] = [
  {
    name: "a stored prompt",
    body: codexBody({ prompt: { id: "pmpt_abc", version: "2" } }),
    at: "prompt",
  },
  {
    name: "an earlier response",
    body: codexBody({ previous_response_id: "resp_0123" }),
    at: "previous_response_id",
  },
  {
    name: "a conversation by id",
    body: codexBody({ conversation: "conv_0123" }),
    at: "conversation",
  },
  {
    name: "a conversation object",
    body: codexBody({ conversation: { id: "conv_0123" } }),
    at: "conversation",
  },
  {
    name: "a stored item in the input",
    body: codexBody({
      input: [{ role: "user", content: "go on" }, { type: "item_reference", id: "msg_0123" }],
    }),
    at: "input[1]",
  },
  {
    name: "a tool_choice that forces the hosted web search",
    body: codexBody({ tool_choice: { type: "web_search_preview" } }),
    at: "tool_choice",
  },
  {
    name: "a tool_choice of the hosted file search",
    body: codexBody({ tool_choice: { type: "file_search" } }),
    at: "tool_choice",
  },
  {
    name: "allowed_tools that name a hosted tool",
    body: codexBody({
      tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "web_search" }] },
    }),
    at: "tool_choice.tools[0]",
  },
];

Deno.test("a Responses request naming what the service keeps, or forcing a hosted tool, is refused and never sent", async () => {
  await withProxy(async (t) => {
    for (const { name, body, at } of REFUSED) {
      const answer = await t.openaiPost("/v1/responses", body);
      const text = await answer.text();
      assertEquals(answer.status, 403, `${name}: ${text}`);
      assertStringIncludes(text, "see runbook.md#model-proxy-refused", name);
      assertEquals(JSON.parse(text).error.param, at, name);
      assertEquals(t.blocked.at(-1)?.at, at, name);
    }
    assertEquals(t.blocked.length, REFUSED.length);
    assertEquals(t.blocked.slice(0, 5).map((event) => event.reason), [
      "stored_reference",
      "stored_reference",
      "stored_reference",
      "stored_reference",
      "stored_reference",
    ]);
    assertEquals(t.openai.requests.length, 0);
  });
});

Deno.test("what the agents send passes: the whole input, store false, tool_choice auto or a function, no reference", async () => {
  await withProxy(async (t) => {
    const bodies = [
      codexBody(),
      codexBody({ previous_response_id: null }),
      codexBody({ tool_choice: { type: "function", name: "shell" } }),
      codexBody({ tool_choice: "required" }),
    ];
    for (const body of bodies) {
      const answer = await t.openaiPost("/v1/responses", body);
      assertEquals(answer.status, 200, await answer.text());
    }
    assertEquals(t.blocked, []);
    assertEquals(t.openai.requests.length, bodies.length);
  });
});

/**
 * The model endpoint refuses every request that would make the service reach something for the task
 * (runbook.md#model-proxy-refused), wherever in the body it is: at the top, inside a tool_result's
 * content or a function call's output, or nested far deeper. Each is refused in plain, streaming
 * and count_tokens requests alike, with a 403 in the service's own error format and a blocked
 * event, and nothing reaches the service. What asks for no fetch (inline images, client tools, a
 * schema that names such fields) passes.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { type ProxyTest, withProxy } from "./proxy_kit.ts";
import type { ModelBlockedEvent } from "../../mod/model-proxy/mod.ts";

type Fields = Record<string, unknown>;

/** `block` inside a tool_result's content, the way an agent returns what a tool read. */
function inToolResult(block: unknown): Fields {
  return {
    role: "user",
    content: [
      { type: "text", text: "here is what the tool read" },
      {
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: [{ type: "text", text: "ok" }, block],
      },
    ],
  };
}

/** `block` under `depth` levels of nested content, far deeper than any real request. */
function buried(block: unknown, depth: number): unknown {
  let value: unknown = block;
  for (let i = 0; i < depth; i++) value = { type: "text", text: "x", content: [value] };
  return value;
}

/** An Anthropic Messages body whose message history carries `message`, and these tools. */
function messagesBody(message: Fields, tools: unknown[] = []): Fields {
  return {
    model: "claude-sonnet-4-5",
    max_tokens: 100,
    messages: [
      { role: "user", content: "read this" },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_1", name: "Read", input: { path: "a" } }],
      },
      message,
    ],
    tools: [{ name: "Read", input_schema: { type: "object" } }, ...tools],
  };
}

/** A Responses body whose input carries `item`, and these tools. */
function responsesBody(item: unknown, tools: unknown[] = []): Fields {
  return {
    model: "gpt-5-codex",
    input: [
      { role: "user", content: [{ type: "input_text", text: "look" }] },
      { type: "function_call", call_id: "call_1", name: "shell", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: [item] },
    ],
    tools: [{ type: "function", name: "shell", parameters: { type: "object" } }, ...tools],
  };
}

const IMAGE_URL = { type: "image", source: { type: "url", url: "http://10.0.0.1/secret.png" } };
const DOCUMENT_URL = {
  type: "document",
  source: { type: "url", url: "https://attacker.example/?q=exfil" },
};
const FILE_SOURCE = { type: "document", source: { type: "file", file_id: "file_011C" } };
const CONTAINER_UPLOAD = { type: "container_upload", file_id: "file_011D" };
/** A document whose content is itself blocks, one of them an image by URL. */
const NESTED_DOCUMENT = {
  type: "document",
  source: { type: "content", content: [{ type: "text", text: "a" }, IMAGE_URL] },
};

/** Anthropic bodies, each with one thing the service would fetch, and the reason expected. */
const ANTHROPIC_CASES: { name: string; body: Fields; reason: string; at: string }[] = [
  {
    name: "an mcp_servers entry",
    body: {
      ...messagesBody({ role: "user", content: "hi" }),
      mcp_servers: [{ type: "url", url: "https://mcp.example/sse", name: "x" }],
    },
    reason: "mcp_server",
    at: "mcp_servers",
  },
  {
    name: "an mcp_toolset tool",
    body: messagesBody({ role: "user", content: "hi" }, [{
      type: "mcp_toolset",
      mcp_server_name: "x",
    }]),
    reason: "mcp_tool",
    at: "tools[1]",
  },
  ...[
    "web_search_20250305",
    "web_fetch_20250910",
    "code_execution_20250825",
    "tool_search_tool_regex_20251119",
    "bash_code_execution",
    "computer_use",
    "web_search_29991231",
  ].map((type) => ({
    name: `a ${type} tool`,
    body: messagesBody({ role: "user", content: "hi" }, [{ type, name: "t" }]),
    reason: "server_tool",
    at: "tools[1]",
  })),
  {
    name: "an image by URL in a tool_result",
    body: messagesBody(inToolResult(IMAGE_URL)),
    reason: "url_source",
    at: "messages[2].content[1].content[1].source",
  },
  {
    name: "a document by URL in a tool_result",
    body: messagesBody(inToolResult(DOCUMENT_URL)),
    reason: "url_source",
    at: "messages[2].content[1].content[1].source",
  },
  {
    name: "an image by URL inside a document's own content",
    body: messagesBody(inToolResult(NESTED_DOCUMENT)),
    reason: "url_source",
    at: "messages[2].content[1].content[1].source.content[1].source",
  },
  {
    name: "a document by file_id",
    body: messagesBody({ role: "user", content: [FILE_SOURCE] }),
    reason: "file_reference",
    at: "messages[2].content[0].source",
  },
  {
    name: "a container_upload's file_id",
    body: messagesBody({ role: "user", content: [CONTAINER_UPLOAD] }),
    reason: "file_reference",
    at: "messages[2].content[0].file_id",
  },
  {
    name: "an image by URL 30 levels down",
    body: messagesBody({ role: "user", content: [buried(IMAGE_URL, 30)] }),
    reason: "url_source",
    at: `messages[2].content[0]${".content[0]".repeat(30)}.source`,
  },
];

/** OpenAI bodies (Responses and Chat Completions), each with one thing the service would fetch. */
const OPENAI_CASES: { name: string; path: string; body: Fields; reason: string; at: string }[] = [
  ...[
    "web_search",
    "web_search_preview",
    "web_search_preview_2025_03_11",
    "file_search",
    "code_interpreter",
    "image_generation",
  ].map((type) => ({
    name: `a ${type} tool`,
    path: "/v1/responses",
    body: responsesBody({ type: "input_text", text: "x" }, [{ type }]),
    reason: "server_tool",
    at: "tools[1]",
  })),
  {
    name: "a web_search tool inside a namespace of tools (as Codex groups an MCP server's)",
    path: "/v1/responses",
    body: responsesBody({ type: "input_text", text: "x" }, [{
      type: "namespace",
      name: "mcp__box",
      tools: [{ type: "function", name: "echo", parameters: { type: "object" } }, {
        type: "web_search",
      }],
    }]),
    reason: "server_tool",
    at: "tools[1].tools[1]",
  },
  {
    name: "an mcp tool",
    path: "/v1/responses",
    body: responsesBody({ type: "input_text", text: "x" }, [{
      type: "mcp",
      server_label: "x",
      server_url: "https://mcp.example",
    }]),
    reason: "mcp_tool",
    at: "tools[1]",
  },
  {
    name: "an input_image by https URL in a function call's output",
    path: "/v1/responses",
    body: responsesBody({ type: "input_image", image_url: "https://attacker.example/a.png" }),
    reason: "remote_image",
    at: "input[2].output[0].image_url",
  },
  {
    name: "an input_image by http URL",
    path: "/v1/responses",
    body: responsesBody({ type: "input_image", image_url: "http://169.254.169.254/latest" }),
    reason: "remote_image",
    at: "input[2].output[0].image_url",
  },
  {
    name: "an input_file by file_url",
    path: "/v1/responses",
    body: responsesBody({ type: "input_file", file_url: "https://attacker.example/a.pdf" }),
    reason: "remote_file",
    at: "input[2].output[0].file_url",
  },
  {
    name: "an input_file by file_id",
    path: "/v1/responses",
    body: responsesBody({ type: "input_file", file_id: "file-abc" }),
    reason: "file_reference",
    at: "input[2].output[0].file_id",
  },
  {
    name: "an image_url part by https URL in a chat message",
    path: "/v1/chat/completions",
    body: {
      model: "gpt-5",
      messages: [{
        role: "user",
        content: [{ type: "text", text: "see" }, {
          type: "image_url",
          image_url: { url: "https://attacker.example/a.png", detail: "low" },
        }],
      }],
    },
    reason: "remote_image",
    at: "messages[0].content[1].image_url",
  },
  {
    name: "web_search_options",
    path: "/v1/chat/completions",
    body: {
      model: "gpt-5-search-api",
      messages: [{ role: "user", content: "news" }],
      web_search_options: {},
    },
    reason: "web_search_options",
    at: "web_search_options",
  },
  {
    name: "an input_image by URL 30 levels down",
    path: "/v1/responses",
    body: responsesBody(buried({ type: "input_image", image_url: "https://a.example/x" }, 30)),
    reason: "remote_image",
    at: `input[2].output[0]${".content[0]".repeat(30)}.image_url`,
  },
];

async function expectRefused(
  t: ProxyTest,
  request: { service: "anthropic" | "openai"; path: string; body: Fields },
  expected: { reason: string; at: string; name: string },
): Promise<void> {
  const send = request.service === "anthropic" ? t.anthropicPost : t.openaiPost;
  const before = t.blocked.length;
  const answer = await send(request.path, request.body);
  const label = `${expected.name} on ${request.path}`;
  assertEquals(answer.status, 403, label);
  const error = await answer.json();
  if (request.service === "anthropic") {
    assertEquals([error.type, error.error.type], ["error", "permission_error"], label);
    assertStringIncludes(error.error.message, `at ${expected.at})`, label);
    assertStringIncludes(error.error.message, "see runbook.md#model-proxy-refused", label);
  } else {
    assertEquals([error.error.type, error.error.param], ["invalid_request_error", expected.at]);
    assertStringIncludes(error.error.message, "see runbook.md#model-proxy-refused", label);
  }
  assertEquals(t.blocked.slice(before), [{
    service: request.service,
    path: request.path,
    reason: expected.reason as ModelBlockedEvent["reason"],
    at: expected.at,
  }], label);
}

Deno.test("each Anthropic shape that makes the service fetch is refused, nested, streamed and in count_tokens", async () => {
  await withProxy(async (t) => {
    for (const item of ANTHROPIC_CASES) {
      await expectRefused(t, { service: "anthropic", path: "/v1/messages", body: item.body }, item);
      await expectRefused(t, {
        service: "anthropic",
        path: "/v1/messages",
        body: { ...item.body, stream: true },
      }, item);
      await expectRefused(t, {
        service: "anthropic",
        path: "/v1/messages/count_tokens",
        body: { ...item.body, max_tokens: undefined },
      }, item);
    }
    assertEquals(t.blocked.length, ANTHROPIC_CASES.length * 3);
    assertEquals(t.anthropic.requests, []);
  });
});

Deno.test("each OpenAI shape that makes the service fetch is refused, nested and streamed", async () => {
  await withProxy(async (t) => {
    for (const item of OPENAI_CASES) {
      for (const stream of [false, true]) {
        await expectRefused(t, {
          service: "openai",
          path: item.path,
          body: { ...item.body, stream },
        }, item);
      }
    }
    assertEquals(t.openai.requests, []);
  });
});

Deno.test("what asks the service to fetch nothing passes: inline images, client tools, schemas and tool inputs that name such fields", async () => {
  await withProxy(async (t) => {
    const schema = {
      type: "object",
      properties: {
        file_id: { type: "string" },
        image_url: { type: "string" },
        source: { type: "object", properties: { type: { const: "url" } } },
        mcp_servers: { type: "array" },
      },
    };
    const anthropic = messagesBody(
      inToolResult({
        type: "image",
        source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
      }),
      [
        { type: "custom", name: "Upload", input_schema: schema },
        { type: "bash_20250124", name: "bash" },
        { type: "text_editor_20250728", name: "str_replace_based_edit_tool" },
        { type: "computer_20250124", name: "computer", display_width_px: 1024 },
        { type: "memory_20250818", name: "memory" },
      ],
    );
    (anthropic.messages as Fields[])[1] = {
      role: "assistant",
      content: [{
        type: "tool_use",
        id: "toolu_1",
        name: "Upload",
        input: { file_id: "f", source: { type: "url" }, image_url: "https://a.example/" },
      }],
    };
    for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
      const answer = await t.anthropicPost(path, anthropic);
      assertEquals(answer.status, 200, path);
      await answer.body?.cancel();
    }
    const responses = responsesBody(
      { type: "input_image", image_url: "data:image/png;base64,iVBORw0KGgo=" },
      [
        { type: "custom", name: "apply_patch", format: { type: "grammar" } },
        { type: "local_shell" },
        { type: "shell" },
        { type: "shell", environment: { type: "local" } },
        { type: "function", name: "upload", parameters: schema },
        // Codex 0.171.0 offers an MCP server's tools as a namespace of functions.
        {
          type: "namespace",
          name: "mcp__box",
          description: "Tools in the mcp__box namespace.",
          tools: [{ type: "function", name: "example__echo", strict: false, parameters: schema }],
        },
      ],
    );
    responses.text = { format: { type: "json_schema", name: "out", schema } };
    const answer = await t.openaiPost("/v1/responses", responses);
    assertEquals(answer.status, 200);
    await answer.body?.cancel();
    const chat = await t.openaiPost("/v1/chat/completions", {
      model: "gpt-5",
      messages: [{
        role: "user",
        content: [{ type: "image_url", image_url: { url: "DATA:image/png;base64,AAAA" } }],
      }],
      tools: [{ type: "function", function: { name: "upload", parameters: schema } }],
      mcp_servers: [],
    });
    assertEquals(chat.status, 200);
    await chat.body?.cancel();
    assertEquals(t.blocked, []);
    assertEquals([t.anthropic.requests.length, t.openai.requests.length], [2, 2]);
  });
});

Deno.test("a body nested a hundred thousand levels deep is walked, and refused for what it hides", async () => {
  await withProxy(async (t) => {
    const depth = 100_000;
    const body = `{"model":"claude-sonnet-4-5","messages":${"[".repeat(depth)}${
      JSON.stringify(IMAGE_URL)
    }${"]".repeat(depth)}}`;
    const answer = await t.anthropicPost("/v1/messages", body);
    assertEquals(answer.status, 403);
    await answer.body?.cancel();
    assertEquals(t.blocked.map((event) => event.reason), ["url_source"]);
    // The path is cut in the middle, so neither the event nor the message carries 300 KB of it.
    const at = t.blocked[0].at;
    assertEquals([at.length < 400, at.startsWith("messages[0][0][0]"), at.endsWith("[0].source")], [
      true,
      true,
      true,
    ]);
    assertEquals(t.anthropic.requests, []);
  });
});

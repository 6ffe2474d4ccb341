/**
 * The scripted fake Anthropic service of mod/stand-in/anthropic.ts, taught the one step Droid 0.215.0
 * needs first: Droid offers an MCP server's tools by name only (deferred) until the model loads
 * them with its ToolSearch tool. So, when no `*example__echo*` tool is offered but ToolSearch is,
 * and the system prompt says `ToolSearch with {…}` (gurt's DROID_TOOLS_PROMPT does), the fake
 * calls ToolSearch with that input, as a model following the prompt would; ToolSearch's result
 * is then no tool result of the script's, which goes on as mod/stand-in/anthropic.ts's `nextTurn` does
 * (call the echo tool, `FINAL: <its result>` after it, `NO-TOOL` without one). With `bash` set,
 * the fake's first step runs that command through Droid's own shell tool, Execute, and answers
 * `FINAL: <its output>`. `retries`, `usage` and `tool` (a tool to call first once offered, such as
 * a loaded `box___box_ask_user`) are mod/stand-in/anthropic.ts's. Streamed or whole answers
 * in the service's format; every request is logged.
 */
import {
  type FakeAnthropic,
  type FakeAnthropicOptions,
  type FakeAnthropicRequest,
  type FakeBody,
  nextTurn,
} from "../../mod/stand-in/anthropic.ts";

type Turn = ReturnType<typeof nextTurn>;

const USAGE = { input_tokens: 1_000, output_tokens: 50 };

type Usage = { input_tokens: number; output_tokens: number };

/** What the script does: mod/stand-in/anthropic.ts's options (its port and log aside). */
export type FakeDroidOptions = Pick<FakeAnthropicOptions, "bash" | "retries" | "usage" | "tool">;

/** Starts the fake on 127.0.0.1, on a port the kernel chooses. */
export function startFakeAnthropicDroid(options: FakeDroidOptions = {}): FakeAnthropic {
  const usage = options.usage ?? USAGE;
  const requests: FakeAnthropicRequest[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const text = await req.text();
    const request: FakeAnthropicRequest = {
      method: req.method,
      path: url.pathname + url.search,
      headers: Object.fromEntries(req.headers),
      body: parse(text),
    };
    requests.push(request);
    if (req.method === "POST" && url.pathname === "/v1/messages/count_tokens") {
      return Response.json({ input_tokens: 10 });
    }
    if (req.method !== "POST" || url.pathname !== "/v1/messages") {
      return Response.json({
        type: "error",
        error: {
          type: "not_found_error",
          message: `the fake has no ${req.method} ${url.pathname}`,
        },
      }, { status: 404 });
    }
    const body = request.body ?? {};
    const turn = droidTurn(body, options);
    const model = typeof body.model === "string" ? body.model : "claude-sonnet-4-5";
    if (body.stream === true) {
      return new Response(events(model, turn, usage).join(""), {
        headers: { "content-type": "text/event-stream; charset=utf-8" },
      });
    }
    return Response.json(message(model, turn, usage));
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    messages: () => requests.filter((r) => r.path.split("?")[0] === "/v1/messages"),
    close: () => server.shutdown(),
  };
}

function parse(text: string): FakeBody {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The ToolSearch input the system prompt gives (`ToolSearch with {…}`), else null. */
function searchInput(body: FakeBody): unknown {
  const system = Array.isArray(body.system)
    ? body.system.map((block: FakeBody) => String(block?.text ?? "")).join("\n")
    : String(body.system ?? "");
  const found = system.match(/ToolSearch with (\{[^}]*\})/);
  if (found === null) return null;
  try {
    return JSON.parse(found[1]);
  } catch {
    return null;
  }
}

/**
 * Droid's step: run `bash` through Execute first when set, else load the deferred tools first;
 * then the common script.
 */
export function droidTurn(body: FakeBody, given: FakeDroidOptions = {}): Turn {
  const messages: FakeBody[] = Array.isArray(body.messages) ? body.messages : [];
  const tools: { name: string }[] = Array.isArray(body.tools) ? body.tools : [];
  const options = { agent: "droid", retries: given.retries, tool: given.tool };
  const last = messages.at(-1);
  const before = messages.at(-2);
  const searched = last?.role === "user" && Array.isArray(last.content) &&
    before?.role === "assistant" && Array.isArray(before.content) &&
    before.content.some((block: FakeBody) =>
      block?.type === "tool_use" && block.name === "ToolSearch"
    );
  if (searched) {
    // What ToolSearch loaded is in `tools` now; the script goes on from the prompt.
    return nextTurn({ ...body, messages: messages.slice(0, -2) }, options);
  }
  const echo = tools.some((tool) => tool.name.includes("example__echo"));
  const input = searchInput(body);
  const lastIsResult = Array.isArray(last?.content) &&
    last.content.some((block: FakeBody) => block?.type === "tool_result");
  if (given.bash !== undefined && !lastIsResult && tools.some((t) => t.name === "Execute")) {
    return {
      kind: "tool",
      use: {
        name: "Execute",
        // Execute's schema asks all four: a 3-8 word summary, the command, the risk and why.
        input: {
          summary: "Run the test's command",
          command: given.bash,
          riskLevelReason: "The test's command only reads and prints what the task can see.",
          riskLevel: "low",
        },
      },
    };
  }
  if (!echo && !lastIsResult && input !== null && tools.some((t) => t.name === "ToolSearch")) {
    return { kind: "tool", use: { name: "ToolSearch", input } };
  }
  return nextTurn(body, options);
}

let counter = 0;

function block(turn: Turn): Record<string, unknown> {
  if (turn.kind === "text") return { type: "text", text: turn.text };
  return {
    type: "tool_use",
    id: `toolu_droid${++counter}`,
    name: turn.use.name,
    input: turn.use.input,
  };
}

function message(model: string, turn: Turn, usage: Usage): unknown {
  return {
    id: `msg_droid${++counter}`,
    type: "message",
    role: "assistant",
    model,
    content: [block(turn)],
    stop_reason: turn.kind === "tool" ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage,
  };
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A streamed answer of one block, as the service writes it. */
function events(model: string, turn: Turn, usage: Usage): string[] {
  const content = block(turn);
  const start = turn.kind === "text" ? { type: "text", text: "" } : { ...content, input: {} };
  const delta = turn.kind === "text"
    ? { type: "text_delta", text: turn.text }
    : { type: "input_json_delta", partial_json: JSON.stringify(turn.use.input) };
  return [
    sse("message_start", {
      type: "message_start",
      message: {
        id: `msg_droid${++counter}`,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
      },
    }),
    sse("content_block_start", { type: "content_block_start", index: 0, content_block: start }),
    sse("content_block_delta", { type: "content_block_delta", index: 0, delta }),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: turn.kind === "tool" ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
    sse("message_stop", { type: "message_stop" }),
  ];
}

/**
 * `gurt mcp` read line by line, as a client's JSON-RPC sees it: Claude Code's opening (a
 * `server/discover` probe first, then initialize at 2025-11-25), the protocol versions the MCP SDK
 * speaks, and the JSON-RPC errors for what is not a request it can answer.
 */
import {
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { assert, assertEquals } from "../assert.ts";
import { grant, gurtArgs, startBox } from "../kit/mod.ts";
import denoJson from "../../deno.json" with { type: "json" };

// deno-lint-ignore no-explicit-any
type Message = any;

/** `gurt mcp` on piped stdio: send a line, read the answer to an id, and close. */
interface RawRelay {
  send(line: string): Promise<void>;
  /** The next message on stdout. */
  next(): Promise<Message>;
  /** Sends a request and returns the next message, which must answer it. */
  ask(id: number | string, method: string, params?: unknown): Promise<Message>;
  /** Closes stdin; resolves with the exit code and anything printed after. */
  close(): Promise<{ code: number; rest: string }>;
}

/** `read`, or a failure after 10 s: a missing answer fails the test rather than hanging it. */
async function withinTenSeconds<T>(read: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("no answer in 10 s")), 10_000);
  });
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}

function startRelay(env: Record<string, string>): RawRelay {
  const child = new Deno.Command(Deno.execPath(), {
    args: gurtArgs(["mcp"]),
    env: { ...env, NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  const encoder = new TextEncoder();
  const relay: RawRelay = {
    send: (line) => writer.write(encoder.encode(`${line}\n`)),
    async next() {
      while (!buffered.includes("\n")) {
        const { value, done } = await withinTenSeconds(reader.read());
        if (done) throw new Error(`stdout ended; it held ${JSON.stringify(buffered)}`);
        buffered += value;
      }
      const end = buffered.indexOf("\n");
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      return JSON.parse(line);
    },
    async ask(id, method, params) {
      await relay.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      const answer = await relay.next();
      assertEquals(answer.id, id, JSON.stringify(answer));
      return answer;
    },
    async close() {
      await writer.close();
      let rest = buffered;
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        rest += value;
      }
      return { code: (await child.status).code, rest };
    },
  };
  return relay;
}

Deno.test("gurt mcp answers Claude Code's opening: server/discover is -32601, then initialize at 2025-11-25 and tools/list", async () => {
  const box = await startBox({ grants: { echo: grant({ tool: "example.echo" }) } });
  try {
    const task = await box.startTask({ tools: ["example.echo"] });
    const relay = startRelay({ BOX_SOCKET: task.socket, BOX_TASK: task.id });
    const discover = await relay.ask(0, "server/discover", {
      _meta: { protocolVersion: "2026-07-28" },
    });
    assertEquals(discover.jsonrpc, "2.0");
    assertEquals(discover.error.code, -32601);
    const init = await relay.ask(1, "initialize", {
      protocolVersion: "2025-11-25",
      capabilities: { roots: {}, elicitation: {} },
      clientInfo: { name: "claude-code", version: "2.1.197" },
    });
    assertEquals(init, {
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocolVersion: "2025-11-25",
        capabilities: { tools: {}, logging: {} },
        serverInfo: { name: "gurt", version: denoJson.version },
      },
    });
    await relay.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    const list = await relay.ask(2, "tools/list", {});
    assertEquals(list.result.tools.map((t: { name: string }) => t.name), [
      "example__echo",
      "box_ask",
    ]);
    const call = await relay.ask("call-1", "tools/call", {
      name: "example__echo",
      arguments: { text: "hi" },
    });
    assertEquals(call.result, { content: [{ type: "text", text: '{"text":"hi"}' }] });
    assertEquals((await relay.ask(3, "ping")).result, {});
    assertEquals(await relay.close(), { code: 0, rest: "" });
  } finally {
    await box.close();
  }
});

Deno.test("gurt mcp speaks every protocol version the MCP SDK does, and answers its latest to any other", async () => {
  const box = await startBox();
  try {
    const task = await box.startTask({ tools: ["example.echo"] });
    const relay = startRelay({ BOX_SOCKET: task.socket, BOX_TASK: task.id });
    let id = 0;
    for (const version of [...SUPPORTED_PROTOCOL_VERSIONS, "2099-01-01", "1999-01-01"]) {
      const init = await relay.ask(++id, "initialize", {
        protocolVersion: version,
        capabilities: {},
        clientInfo: { name: "raw", version: "0" },
      });
      const expected = SUPPORTED_PROTOCOL_VERSIONS.includes(version)
        ? version
        : LATEST_PROTOCOL_VERSION;
      assertEquals(init.result.protocolVersion, expected, version);
    }
    assertEquals((await relay.close()).code, 0);
  } finally {
    await box.close();
  }
});

Deno.test("gurt mcp answers JSON-RPC errors for a line that is not JSON, not a request, or a call without a tool, and goes on", async () => {
  const box = await startBox();
  try {
    const task = await box.startTask({ tools: ["example.echo"] });
    const relay = startRelay({ BOX_SOCKET: task.socket, BOX_TASK: task.id });
    await relay.send("{not json");
    const parse = await relay.next();
    assertEquals([parse.id, parse.error.code], [null, -32700]);
    await relay.send("[1, 2]");
    const batch = await relay.next();
    assertEquals([batch.id, batch.error.code], [null, -32600]);
    await relay.send(JSON.stringify({ jsonrpc: "1.0", id: 5, method: "ping" }));
    const version = await relay.next();
    assertEquals([version.id, version.error.code], [5, -32600]);
    const noName = await relay.ask(6, "tools/call", { arguments: {} });
    assertEquals(noName.error.code, -32602);
    const badArguments = await relay.ask(7, "tools/call", { name: "example__echo", arguments: 3 });
    assertEquals(badArguments.error.code, -32602);
    const unknown = await relay.ask(8, "resources/list", {});
    assertEquals(unknown.error.code, -32601);
    // A notification, known or not, and a response to nothing get no answer: the next line out
    // answers the ping after them.
    await relay.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/whatever" }));
    await relay.send(JSON.stringify({ jsonrpc: "2.0", id: 99, result: {} }));
    await relay.send("");
    assertEquals((await relay.ask(9, "ping")).result, {});
    // A denial is a result the model reads, not a protocol error.
    const denied = await relay.ask(10, "tools/call", { name: "shell", arguments: {} });
    assert(denied.result.content[0].text.startsWith("Denied"), JSON.stringify(denied));
    assertEquals(await relay.close(), { code: 0, rest: "" });
  } finally {
    await box.close();
  }
});

/**
 * `gurt app-host MODULE` (mod/apps/app_host.ts), the real command, spoken to by the official MCP
 * SDK's client over stdio: the docs' example app (docs/examples/notes-app) and a probe app
 * (probe_app.ts) whose tools report what the host gave them and what its role lets them do.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { gurt, gurtArgs, gurtCommand, readUntil } from "../kit/mod.ts";
import notesTools from "../../docs/examples/notes-app/app.ts";

const NOTES_APP = new URL("../../docs/examples/notes-app/app.ts", import.meta.url).pathname;
const PROBE_APP = new URL("./probe_app.ts", import.meta.url).pathname;
const TOKEN = "notes-token-4f9c2a71e0";
const KEY_META = "gurt/idempotency-key";

interface Host {
  client: Client;
  home: string;
  /** Resolves once the host's stderr holds `text`. */
  stderrHas(text: string): Promise<void>;
}

/** Runs `work` with an SDK client of `gurt app-host MODULE`, its home a new folder; closes both. */
async function withHost(
  module: string,
  work: (host: Host) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "gurt-app-home-" });
  const { GURT_APP_HOSTS: _hosts, ...inherited } = Deno.env.toObject();
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: gurtArgs(["app-host", module]),
    env: { ...inherited, GURT_APP_HOME: home, GURT_APP_SECRET_NOTES_TOKEN: TOKEN, ...env },
    stderr: "pipe",
  });
  let stderr = "";
  const waiting: { text: string; resolve: () => void }[] = [];
  transport.stderr!.on("data", (chunk: Uint8Array) => {
    stderr += new TextDecoder().decode(chunk);
    for (const wait of waiting.filter((one) => stderr.includes(one.text))) wait.resolve();
  });
  const stderrHas = (text: string) =>
    stderr.includes(text)
      ? Promise.resolve()
      : new Promise<void>((resolve) => waiting.push({ text, resolve }));
  const client = new Client({ name: "gurt-test", version: "0.0.0" });
  try {
    await client.connect(transport);
    await work({ client, home, stderrHas });
  } finally {
    await client.close();
    await Deno.remove(home, { recursive: true });
  }
}

function call(name: string, key: string | null, args: Record<string, unknown> = {}) {
  return { name, arguments: args, ...(key === null ? {} : { _meta: { [KEY_META]: key } }) };
}

function textOf(result: unknown): string {
  return (result as { content: { text: string }[] }).content.map((c) => c.text).join("");
}

Deno.test("tools/list answers the example app's tools with its schemas and read-only hints", async () => {
  await withHost(NOTES_APP, async ({ client }) => {
    const { tools } = await client.listTools() as {
      tools: {
        name: string;
        description?: string;
        inputSchema: unknown;
        annotations?: { readOnlyHint?: boolean };
      }[];
    };
    assertEquals(tools.map((tool) => tool.name), notesTools.map((tool) => tool.name));
    for (const tool of notesTools) {
      const listed = tools.find((one) => one.name === tool.name)!;
      assertEquals(listed.description, tool.description);
      assertEquals(listed.inputSchema, tool.input);
      assertEquals(listed.annotations?.readOnlyHint, tool.readOnly === true);
    }
  });
});

Deno.test("a call's ctx.key is its _meta idempotency key: the same key adds a note once", async () => {
  await withHost(NOTES_APP, async ({ client }) => {
    const note = { title: "milk", text: "two litres" };
    const first = await client.callTool(call("add_note", "t1.call-a", note));
    assertEquals(first.structuredContent, { id: "t1.call-a", added: true, count: 1 });
    const again = await client.callTool(call("add_note", "t1.call-a", note));
    assertEquals(again.structuredContent, { id: "t1.call-a", added: false, count: 1 });
    await client.callTool(call("add_note", "t1.call-b", { title: "eggs", text: "six" }));
    const listed = await client.callTool(call("list_notes", "t1.call-c"));
    const notes = (listed.structuredContent as { notes: { id: string }[] }).notes;
    assertEquals(notes.map((one) => one.id), ["t1.call-a", "t1.call-b"]);
    assertEquals(JSON.parse(textOf(listed)), listed.structuredContent);
  });
});

Deno.test("ctx.secret gives a tool the key it declares: the export is signed with NOTES_TOKEN", async () => {
  await withHost(NOTES_APP, async ({ client, stderrHas }) => {
    await client.callTool(call("add_note", "t1.a", { title: "t", text: "x" }));
    const result = await client.callTool(call("export_notes", "t1.b"));
    assertEquals(result.isError, undefined);
    const { body, signature } = result.structuredContent as { body: string; signature: string };
    const key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(TOKEN),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["verify"],
    );
    const mac = Uint8Array.from(signature.match(/../g)!.map((hex) => parseInt(hex, 16)));
    assert(await crypto.subtle.verify("HMAC", key, mac, new TextEncoder().encode(body)));
    assertEquals(JSON.parse(body).length, 1);
    await stderrHas(`export_notes: exported ${body.length} bytes`);
  });
});

Deno.test("ctx.secret of a key the tool does not declare is an error result that names it", async () => {
  await withHost(PROBE_APP, async ({ client }) => {
    const result = await client.callTool(call("read_undeclared", "t1.a"));
    assertEquals(result.isError, true);
    assertStringIncludes(textOf(result), "NOTES_TOKEN is not among the secrets");
    assertStringIncludes(textOf(result), "see runbook.md#secret-refused");
    assertNotIncludes(textOf(result), TOKEN);
  });
});

Deno.test("the app's vault key is gone from the host's environment, by name and by value", async () => {
  await withHost(PROBE_APP, async ({ client, home }) => {
    const result = await client.callTool(call("env_probe", "t1.a"));
    assertEquals(result.structuredContent, {
      secretNames: [],
      holdsValue: false,
      valueLength: TOKEN.length,
      home,
    });
  });
});

Deno.test("a tool that throws answers isError with the error's message", async () => {
  await withHost(PROBE_APP, async ({ client }) => {
    const result = await client.callTool(call("fail", "t1.a"));
    assertEquals(result.isError, true);
    assertEquals(textOf(result), "the probe failed on purpose");
  });
});

Deno.test("a result the tool builds as MCP content passes through as it is", async () => {
  await withHost(PROBE_APP, async ({ client }) => {
    const result = await client.callTool(call("built", "t1.a"));
    assertEquals(result.content, [{ type: "text", text: "built by the tool" }]);
    assertEquals(result.isError, true);
  });
});

Deno.test("a call without an idempotency key is refused and runs nothing", async () => {
  await withHost(NOTES_APP, async ({ client }) => {
    const refused = await client.callTool(call("add_note", null, { title: "t", text: "x" }))
      .then(() => null, (error: Error) => error);
    assert(refused !== null, "a call without a key was answered");
    assertStringIncludes(refused.message, `no idempotency key: tools/call must carry _meta`);
    assertStringIncludes(refused.message, "see runbook.md#app-call-refused");
    const listed = await client.callTool(call("list_notes", "t1.b"));
    assertEquals(listed.structuredContent, { notes: [] });
  });
});

Deno.test("cancelling a call aborts its ctx.signal", async () => {
  await withHost(PROBE_APP, async ({ client, stderrHas }) => {
    const cancel = new AbortController();
    const pending = client.callTool(call("wait_for_cancel", "t1.wait"), undefined, {
      signal: cancel.signal,
    }).then(() => "answered", () => "rejected");
    await stderrHas("waiting t1.wait");
    cancel.abort();
    assertEquals(await pending, "rejected");
    // notifications/cancelled reaches the host before this request, and it reads them in order.
    const state = await client.callTool(call("signal_state", "t1.state", { key: "t1.wait" }));
    assertEquals(state.structuredContent, { seen: true, aborted: true });
    await stderrHas("cancelled t1.wait");
  });
});

Deno.test("the app-host role writes only the app's home, runs nothing, and reaches only GURT_APP_HOSTS", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response("hello from loopback"),
  );
  const url = `http://127.0.0.1:${server.addr.port}/`;
  const outside = await Deno.makeTempDir({ prefix: "gurt-app-outside-" });
  const act = async (client: Client, args: Record<string, string>) =>
    textOf(await client.callTool(call("act", `t1.${crypto.randomUUID()}`, args)));
  try {
    await withHost(PROBE_APP, async ({ client, home }) => {
      assertEquals(await act(client, { write: `${home}/mine.txt` }), "written");
      assertStringIncludes(await act(client, { write: `${outside}/theirs.txt` }), "NotCapable");
      assertStringIncludes(await act(client, { run: "true" }), "NotCapable");
      assertStringIncludes(await act(client, { fetch: url }), "NotCapable");
    });
    await withHost(PROBE_APP, async ({ client }) => {
      assertEquals(await act(client, { fetch: url }), "fetched: hello from loopback");
    }, { GURT_APP_HOSTS: `127.0.0.1:${server.addr.port}` });
  } finally {
    await server.shutdown();
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("a call still running when the client closes stdin is finished and answered before the host exits", async () => {
  let asked!: () => void;
  const fetched = new Promise<void>((resolve) => asked = resolve);
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async () => {
    asked();
    await released;
    return new Response("late");
  });
  const home = await Deno.makeTempDir({ prefix: "gurt-app-home-" });
  try {
    const child = gurtCommand(["app-host", PROBE_APP], {
      env: { GURT_APP_HOME: home, GURT_APP_HOSTS: `127.0.0.1:${server.addr.port}` },
      stdin: "piped",
    }).spawn();
    const output = new Response(child.stdout).text();
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: call("act", "t1.last", { fetch: `http://127.0.0.1:${server.addr.port}/` }),
      },
    ];
    const writer = child.stdin.getWriter();
    await writer.write(
      new TextEncoder().encode(lines.map((l) => `${JSON.stringify(l)}\n`).join("")),
    );
    await fetched;
    await writer.close();
    // Either the host says it is finishing the call, or it has exited (its stderr ended).
    const { text: said, rest } = await readUntil(child.stderr, (text) => text.includes("running"));
    release();
    const status = await child.status;
    await rest;
    assertStringIncludes(said, "the input ended with 1 call still running");
    assertEquals(status.code, 0);
    const answers = (await output).trim().split("\n").map((line) => JSON.parse(line));
    assertEquals(answers.find((answer) => answer.id === 2)?.result?.content, [
      { type: "text", text: "fetched: late" },
    ]);
  } finally {
    release();
    await server.shutdown();
    await Deno.remove(home, { recursive: true });
  }
});

/** Module texts that are not in the App SDK's shape, and what the host's one line says of each. */
const BAD_MODULES: { what: string; text: string; says: string }[] = [
  { what: "no tools export", text: "export const x = 1;\n", says: "exports no tools" },
  {
    what: "a name that is not a tool name",
    text: tools(`{ ...base, name: "Add-Note" }`),
    says: 'tool 1 has the name "Add-Note", which is not a tool name',
  },
  {
    what: "two tools with one name",
    text: tools(`base, { ...base }`),
    says: "two tools are named add_note",
  },
  {
    what: "an input schema that is not an object's",
    text: tools(`{ ...base, input: { type: "string" } }`),
    says: 'tool add_note has an input that is not a JSON Schema of an object (type "object")',
  },
  {
    what: "an input schema that does not compile",
    text: tools(`{ ...base, input: { type: "object", properties: { a: { type: "strin" } } } }`),
    says: "tool add_note has an input schema that does not compile",
  },
  {
    what: "a cost in the module",
    text: tools(`{ ...base, cost: 3 }`),
    says: "tool add_note sets cost, but a tool's cost is the owner's to set, in app.toml",
  },
];

function tools(list: string): string {
  return `const base = { name: "add_note", description: "d", input: { type: "object" }, ` +
    `run: () => "ok" };\nexport default [${list}];\n`;
}

for (const bad of BAD_MODULES) {
  Deno.test(`a module with ${bad.what} exits with one line on stderr and answers nothing`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "gurt-bad-app-" });
    try {
      const module = `${dir}/app.js`;
      await Deno.writeTextFile(module, bad.text);
      const initialize = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {} },
      });
      const run = await gurt(["app-host", module], {
        stdin: `${initialize}\n`,
        env: { GURT_APP_HOME: dir },
      });
      assert(run.code !== 0, `it exited ${run.code}`);
      assertEquals(run.stdout, "");
      assertEquals(run.stderr.trimEnd().split("\n").length, 1, run.stderr);
      assertStringIncludes(run.stderr, `${module}: ${bad.says}`);
      assertStringIncludes(run.stderr, "see runbook.md#app-module-invalid");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("docs/app-sdk.md shows the example app's app.toml and app.ts as they are", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/app-sdk.md", import.meta.url));
  for (const [file, lang] of [["app.toml", "toml"], ["app.ts", "ts"]]) {
    const text = await Deno.readTextFile(
      new URL(`../../docs/examples/notes-app/${file}`, import.meta.url),
    );
    assertStringIncludes(doc, `\`${file}\`:\n\n\`\`\`${lang}\n${text}\`\`\`\n`, `${file} differs`);
  }
});

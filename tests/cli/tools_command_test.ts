/**
 * `gurt tools` lists every tool of the box from the running core (name, read-only or not, cost,
 * app; the input's schema with --json), and a task that calls a tool outside its --tools is told
 * the tool is not one of its tools, not that no grant allows it.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { defineTool, ToolRegistry, type ToolSource } from "../../mod/tools/mod.ts";
import { z } from "zod";
import {
  grant,
  gurt,
  makeHome,
  type ServeProcess,
  startServe,
  startTask,
  stopAllTasks,
  taskRequest,
} from "../kit/mod.ts";

async function withServe(work: (serve: ServeProcess) => Promise<void>): Promise<void> {
  const home = await makeHome({
    prefix: "gurt-tools-",
    dirs: ["grants"],
    files: {
      "grants/echo.toml": grant({ tool: "example.echo" }),
      "grants/spend.toml": grant({ tool: "example.spend" }),
      "gurt.toml": '[portal]\nlisten = "127.0.0.1:0"\n',
    },
  });
  const serve = await startServe(home);
  try {
    assertEquals(serve.exited, null, serve.stderr());
    await work(serve);
  } finally {
    await stopAllTasks(serve).catch(() => {});
    await serve.stop();
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test({
  name:
    "gurt tools lists the box's tools with kind, cost and app, and --json adds each input schema",
  sanitizeResources: false,
  fn: async () => {
    await withServe(async (serve) => {
      const run = await gurt(["--home", serve.home, "tools"]);
      assertEquals(run.code, 0, run.stderr);
      const rows = run.stdout.trim().split("\n").map((line) => line.split(/\s{2,}/));
      assertEquals(rows[0], ["TOOL", "KIND", "COST", "APP", "WHAT IT DOES"]);
      const byName = new Map(rows.slice(1).map((row) => [row[0], row]));
      assertEquals(byName.get("read_file")?.slice(0, 4), [
        "read_file",
        "read-only",
        "free",
        "built-in",
      ]);
      assertEquals(byName.get("shell")?.slice(0, 4), ["shell", "changes", "free", "built-in"]);
      assertEquals(byName.get("example.echo")?.slice(1, 4), ["read-only", "free", "example"]);
      assertEquals(byName.get("example.spend")?.slice(1, 4), ["changes", "by input", "example"]);

      const json = await gurt(["--home", serve.home, "tools", "--json"]);
      assertEquals(json.code, 0, json.stderr);
      const tools = JSON.parse(json.stdout) as {
        name: string;
        costCents: number | null;
        app: string | null;
        input: { properties?: Record<string, unknown> };
      }[];
      const spend = tools.find((tool) => tool.name === "example.spend")!;
      assertEquals([spend.app, spend.costCents], ["example", null]);
      assert("cents" in (spend.input.properties ?? {}), JSON.stringify(spend.input));
      assertEquals(tools.filter((tool) => tool.app === null).map((tool) => tool.name), [
        "read_file",
        "write_file",
        "shell",
        "http_fetch",
      ]);
    });
  },
});

Deno.test("an app's tools are listed with their app and fixed cost", () => {
  const appTool = defineTool({
    name: "notes.add",
    description: "Adds a note.\nSecond line.",
    input: z.object({ text: z.string() }),
    readOnly: false,
    cost: () => 7,
    secrets: [],
    run: () => Promise.resolve("ok"),
  });
  const tools = new Map([[appTool.name, appTool]]);
  const source: ToolSource = { tools: () => tools as never };
  const entry = new ToolRegistry([], source).catalog().find((tool) => tool.name === "notes.add");
  assertEquals(entry?.app, "notes");
  assertEquals(entry?.costCents, 7);
  assertEquals(entry?.readOnly, false);
});

Deno.test({
  name: "a call of a tool outside the task's --tools is told it is not one of its tools",
  sanitizeResources: false,
  fn: async () => {
    await withServe(async (serve) => {
      const task = await startTask(serve, { tools: ["example.echo"] });
      const call = { tool: "example.spend", input: { cents: 1, payee: "x" }, key: "k1" };
      const answer = await taskRequest(serve.home, task, {
        method: "POST",
        path: "/call",
        body: call,
      });
      const error = String((answer.body as { error?: unknown }).error);
      assertStringIncludes(
        error,
        `Denied: "example.spend" is not one of this task's tools (its tools: example.echo)`,
      );
      assert(!error.includes("no grant"), error);
      // A tool of the task with no grant is still "no grant".
      const home = serve.home;
      await Deno.remove(`${home}/grants/echo.toml`);
      const echo = { tool: "example.echo", input: { text: "hi" }, key: "k2" };
      const denied = await taskRequest(home, task, { method: "POST", path: "/call", body: echo });
      assertStringIncludes(String((denied.body as { error?: unknown }).error), "no grant");
    });
  },
});

/**
 * A stand-in for `gurt mcp` in the agent adapters' direct tests: a tiny MCP server on stdio with one
 * tool, `example__echo` ({text} → the text result `echo: <text>`), that appends what it is asked
 * (`{"event":"list"}`, `{"event":"call","name":…,"arguments":…}`) as JSON lines to the file named by
 * STAND_IN_LOG, after `{"event":"start","env":[…]}` naming the variables it was given (no values). Run as a program; a test imports `standInMcp` for the command that runs it.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import process from "node:process";

/** One line of the stand-in's log. */
export type StandInEvent =
  | { event: "start"; env: string[] }
  | { event: "list" }
  | { event: "call"; name: string; arguments: Record<string, unknown> };

/** The command that runs the stand-in, logging to `log` (AgentContext's mcp shape). */
export function standInMcp(
  log: string,
): { command: string; args: string[]; env: Record<string, string> } {
  const here = new URL(".", import.meta.url).pathname;
  const config = new URL("../../deno.json", import.meta.url).pathname;
  const env: Record<string, string> = {
    STAND_IN_LOG: log,
    DENO_NO_UPDATE_CHECK: "1",
    NO_COLOR: "1",
  };
  // Agents hand their MCP servers a trimmed environment (Codex: HOME, PATH and these), and the
  // test's HOME is a temporary one: Deno's own cache is named so nothing is fetched again.
  const denoDir = Deno.env.get("DENO_DIR") ??
    (Deno.env.get("HOME") === undefined ? undefined : `${Deno.env.get("HOME")}/.cache/deno`);
  if (denoDir !== undefined) env.DENO_DIR = denoDir;
  return {
    command: Deno.execPath(),
    args: [
      "run",
      "--quiet",
      "--no-prompt",
      `--config=${config}`,
      "--allow-read",
      `--allow-write=${log}`,
      "--allow-env",
      `${here}stand_in_mcp.ts`,
    ],
    env,
  };
}

/** The stand-in's log so far (an absent file is an empty log). */
export async function readStandInLog(log: string): Promise<StandInEvent[]> {
  let text = "";
  try {
    text = await Deno.readTextFile(log);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
}

function record(event: StandInEvent): void {
  const log = Deno.env.get("STAND_IN_LOG");
  if (log !== undefined) {
    Deno.writeTextFileSync(log, JSON.stringify(event) + "\n", { append: true });
  }
}

async function serve(): Promise<void> {
  record({ event: "start", env: Object.keys(Deno.env.toObject()).sort() });
  const server = new Server({ name: "stand-in", version: "0.0.0" }, {
    capabilities: { tools: {} },
  });
  server.setRequestHandler(ListToolsRequestSchema, () => {
    record({ event: "list" });
    return {
      tools: [{
        name: "example__echo",
        description: "Echoes the text back.",
        inputSchema: {
          type: "object" as const,
          properties: { text: { type: "string" } },
          required: ["text"],
        },
      }],
    };
  });
  server.setRequestHandler(CallToolRequestSchema, (
    request: { params: { name: string; arguments?: Record<string, unknown> } },
  ): CallToolResult => {
    const input = request.params.arguments ?? {};
    record({ event: "call", name: request.params.name, arguments: input });
    if (request.params.name !== "example__echo") {
      return { content: [{ type: "text", text: `no tool ${request.params.name}` }], isError: true };
    }
    return { content: [{ type: "text", text: `echo: ${String(input.text)}` }] };
  });
  const closed = Promise.withResolvers<void>();
  server.onclose = () => closed.resolve();
  process.stdin.on("end", () => closed.resolve());
  await server.connect(new StdioServerTransport());
  await closed.promise;
}

if (import.meta.main) {
  await serve();
  Deno.exit(0);
}

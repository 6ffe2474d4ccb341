/** `gurt mcp`: the MCP relay on stdio for the task whose socket is BOX_SOCKET (the relay role). */
import { type Command, InvalidArgumentError } from "commander";
import { DEFAULT_WAIT_MS, parseWaitMs } from "../mcp/mod.ts";
import { runMcp } from "./mcp_start.ts";
import { exitWith } from "./run.ts";

/**
 * Registers `gurt mcp`. main.ts runs a plain `gurt mcp [--wait-ms N]` through mcp_start.ts
 * without loading the CLI; this is the same command for `--help` and for a mistake's message.
 */
export function registerMcpCommand(program: Command): void {
  program
    .command("mcp")
    .description("an MCP server on stdio offering the task's tools and box_ask (needs BOX_SOCKET)")
    .option(
      "--wait-ms <ms>",
      "the longest a call waits on the box owner before the agent is told to call again; keep it " +
        "under the agent's own MCP call timeout",
      waitMsOption,
      DEFAULT_WAIT_MS,
    )
    .action((options: { waitMs: number }) => exitWith(() => runMcp(options)));
}

function waitMsOption(text: string): number {
  try {
    return parseWaitMs(text);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

/** `gurt mcp`: the MCP relay on stdio for the task whose socket is BOX_SOCKET (the relay role). */
import { type Command, InvalidArgumentError } from "commander";
import { DEFAULT_WAIT_MS, parseWaitMs } from "../mcp/mod.ts";
import { type McpOptions, runMcp } from "./mcp_start.ts";
import { exitWith } from "./run.ts";

/**
 * Registers `gurt mcp`. main.ts runs a plain `gurt mcp [--wait-ms N] [--permission-tool] …` through
 * mcp_start.ts without loading the CLI; this is the same command for `--help`, for a mistake's
 * message, and for a command line with a global option before `mcp`.
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
    .option(
      "--permission-tool",
      "also offer box_permission, for Claude Code's --permission-prompt-tool (off by default: " +
        "other agents have no use for it)",
    )
    .option(
      "--ask-user-tool",
      "also offer box_ask_user, Droid's AskUser as an owner's approval (off by default: only " +
        "Droid's settings give it)",
    )
    .action((options: RelayOptions) => exitWith(() => runMcp(toMcpOptions(options))));
}

type RelayOptions = { waitMs: number; permissionTool?: true; askUserTool?: true };

function toMcpOptions(options: RelayOptions): McpOptions {
  return {
    waitMs: options.waitMs,
    permissionTool: options.permissionTool === true,
    askUserTool: options.askUserTool === true,
  };
}

function waitMsOption(text: string): number {
  try {
    return parseWaitMs(text);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

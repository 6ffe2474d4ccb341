/**
 * `gurt mcp` without the rest of the command line. An agent lists the box's tools once, early
 * (Droid at its first model request), so `gurt mcp` must answer within 150 ms of starting; the
 * whole CLI takes longer than that to load. main.ts runs a plain
 * `gurt mcp [--wait-ms N] [--permission-tool] [--ask-user-tool]` here before it loads anything else, and this module
 * loads only the role launcher and the relay's arguments. Any other `gurt mcp …` (`--help`, a mistake) goes to the full CLI (mcp_command.ts).
 */
import { DEFAULT_WAIT_MS, parseWaitMs, type RelayArgs } from "../mcp/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";

/** What the light start gives the relay: `gurt mcp`'s options. */
export interface McpOptions {
  waitMs: number;
  permissionTool: boolean;
  askUserTool?: boolean;
}

/**
 * The relay's options in `args` if they are a plain
 * `gurt mcp [--wait-ms N] [--permission-tool] [--ask-user-tool]` (each at most once, in any order;
 * `--wait-ms=N` too), else null.
 */
export function plainMcpOptions(args: readonly string[]): McpOptions | null {
  if (args[0] !== "mcp") return null;
  let value: string | null = null;
  let permissionTool = false;
  let askUserTool = false;
  for (let i = 1; i < args.length; i++) {
    const word = args[i];
    if (word === "--permission-tool" && !permissionTool) {
      permissionTool = true;
    } else if (word === "--ask-user-tool" && !askUserTool) {
      askUserTool = true;
    } else if (word === "--wait-ms" && value === null && i + 1 < args.length) {
      value = args[++i];
    } else if (word.startsWith("--wait-ms=") && value === null) {
      value = word.slice("--wait-ms=".length);
    } else {
      return null; // the full CLI says what is wrong with it
    }
  }
  try {
    return { waitMs: parseWaitMs(value ?? String(DEFAULT_WAIT_MS)), permissionTool, askUserTool };
  } catch {
    return null; // the full CLI says what is wrong with it
  }
}

/** Runs the relay role for the task whose socket is BOX_SOCKET; resolves with its status. */
export function runMcp(options: McpOptions): Promise<number> {
  const socket = Deno.env.get("BOX_SOCKET");
  if (socket === undefined || socket === "") {
    throw new Error("gurt mcp serves one task: BOX_SOCKET must name its broker socket");
  }
  const args: RelayArgs = {
    socket,
    waitMs: options.waitMs,
    permissionTool: options.permissionTool,
    askUserTool: options.askUserTool === true,
  };
  return launchRole(ROLE_TABLE.mcp, { places: { socket }, args });
}

/** Runs the relay and exits with its status; an error is one line and status 1. */
export async function mcpMain(options: McpOptions): Promise<never> {
  let status: number;
  try {
    status = await runMcp(options);
  } catch (error) {
    console.error(`gurt: ${error instanceof Error ? error.message : String(error)}`);
    status = 1;
  }
  Deno.exit(status);
}

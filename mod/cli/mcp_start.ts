/**
 * `gurt mcp` without the rest of the command line. An agent lists the box's tools once, early
 * (Droid at its first model request), so `gurt mcp` must answer within 150 ms of starting; the
 * whole CLI takes longer than that to load. main.ts runs a plain `gurt mcp [--wait-ms N]` here
 * before it loads anything else, and this module loads only the role launcher and the relay's
 * arguments. Any other `gurt mcp …` (`--help`, a mistake) goes to the full CLI (mcp_command.ts).
 */
import { DEFAULT_WAIT_MS, parseWaitMs, type RelayArgs } from "../mcp/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";

/** The relay's options in `args` if they are a plain `gurt mcp [--wait-ms N]`, else null. */
export function plainMcpOptions(args: readonly string[]): { waitMs: number } | null {
  if (args[0] !== "mcp") return null;
  const rest = args.slice(1);
  const value = rest.length === 0
    ? String(DEFAULT_WAIT_MS)
    : rest.length === 2 && rest[0] === "--wait-ms"
    ? rest[1]
    : rest.length === 1 && rest[0].startsWith("--wait-ms=")
    ? rest[0].slice("--wait-ms=".length)
    : null;
  if (value === null) return null;
  try {
    return { waitMs: parseWaitMs(value) };
  } catch {
    return null; // the full CLI says what is wrong with it
  }
}

/** Runs the relay role for the task whose socket is BOX_SOCKET; resolves with its status. */
export function runMcp(options: { waitMs: number }): Promise<number> {
  const socket = Deno.env.get("BOX_SOCKET");
  if (socket === undefined || socket === "") {
    throw new Error("gurt mcp serves one task: BOX_SOCKET must name its broker socket");
  }
  const args: RelayArgs = { socket, waitMs: options.waitMs };
  return launchRole(ROLE_TABLE.mcp, { places: { socket }, args });
}

/** Runs the relay and exits with its status; an error is one line and status 1. */
export async function mcpMain(options: { waitMs: number }): Promise<never> {
  let status: number;
  try {
    status = await runMcp(options);
  } catch (error) {
    console.error(`gurt: ${error instanceof Error ? error.message : String(error)}`);
    status = 1;
  }
  Deno.exit(status);
}

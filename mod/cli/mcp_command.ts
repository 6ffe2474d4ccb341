/** `gurt mcp`: the MCP relay on stdio for the task whose socket is BOX_SOCKET (the relay role). */
import type { Command } from "commander";
import type { RelayArgs } from "../mcp/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { exitWith } from "./run.ts";

/** Registers `gurt mcp`. */
export function registerMcpCommand(program: Command): void {
  program
    .command("mcp")
    .description("an MCP server on stdio offering the task's tools and box_ask (needs BOX_SOCKET)")
    .action(() =>
      exitWith(() => {
        const socket = Deno.env.get("BOX_SOCKET");
        if (socket === undefined || socket === "") {
          throw new Error("gurt mcp serves one task: BOX_SOCKET must name its broker socket");
        }
        const args: RelayArgs = { socket };
        return launchRole(ROLE_TABLE.mcp, { places: { socket }, args });
      })
    );
}

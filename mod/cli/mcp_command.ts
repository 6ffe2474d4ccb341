/** `gurt mcp`: the MCP relay on stdio for the task whose socket is BOX_SOCKET (the relay role). */
import type { Command } from "commander";
import type { RelayArgs } from "../mcp/mod.ts";
import { runRole } from "../roles/mod.ts";
import { exitWith, loadModule } from "./run.ts";

/** Registers `gurt mcp`. */
export function registerMcpCommand(program: Command): void {
  program
    .command("mcp")
    .description("an MCP server on stdio offering the task's tools and box_ask (needs BOX_SOCKET)")
    .action(() =>
      exitWith(async () => {
        const { relayEntry, relayPermissions } = await loadModule<typeof import("../mcp/mod.ts")>(
          new URL("../mcp/mod.ts", import.meta.url),
        );
        const socket = Deno.env.get("BOX_SOCKET");
        if (socket === undefined || socket === "") {
          throw new Error("gurt mcp serves one task: BOX_SOCKET must name its broker socket");
        }
        const args: RelayArgs = { socket };
        return await runRole({
          role: "relay",
          permissions: relayPermissions(socket),
          entry: relayEntry,
          args,
        });
      })
    );
}

/** `gurt tools [--json]`: every tool of the box, from the running core. */
import type { Command } from "commander";
import { adminSocketPath } from "../config/mod.ts";
import type { ToolsArgs } from "../owner/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

/** Registers `gurt tools`. */
export function registerToolsCommand(program: Command): void {
  program
    .command("tools")
    .description(
      "list the box's tools: name, read-only or not, cost, app; --json adds each input schema",
    )
    .option("--json", "print every tool as JSON, with its input's JSON Schema")
    .action((options: { json?: boolean }, command: Command) =>
      exitWith(() => {
        const config = configFor(command);
        const args: ToolsArgs = {
          socket: adminSocketPath(config.home),
          json: options.json === true,
        };
        return launchRole(ROLE_TABLE.tools, { places: { config }, args });
      })
    );
}

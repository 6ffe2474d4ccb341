/** `gurt serve`: runs the core in the core role. */
import type { Command } from "commander";
import type { ServeArgs } from "../core/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

/** Registers `gurt serve`. */
export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("run the core: the audit log, the tasks' sockets, approvals and the admin socket")
    .option("--accept-break", "record an accepted break at the first failure of the audit chain")
    .action((options: { acceptBreak?: boolean }, command: Command) =>
      exitWith(() => {
        const config = configFor(command);
        const args: ServeArgs = { config, acceptBreak: options.acceptBreak === true };
        return launchRole(ROLE_TABLE.serve, { places: { config }, args });
      })
    );
}

/** `gurt serve`: runs the core in the core role. */
import type { Command } from "commander";
import { runRole } from "../roles/mod.ts";
import { configFor, exitWith, loadModule } from "./run.ts";

/** Registers `gurt serve`. */
export function registerServeCommand(program: Command): void {
  program
    .command("serve")
    .description("run the core: the audit log, the tasks' sockets, approvals and the admin socket")
    .option("--accept-break", "record an accepted break at the first failure of the audit chain")
    .action((options: { acceptBreak?: boolean }, command: Command) =>
      exitWith(async () => {
        const config = configFor(command);
        const { corePermissions, serveEntry } = await loadModule<typeof import("../core/mod.ts")>(
          new URL("../core/mod.ts", import.meta.url),
        );
        // The core's Worker listens for SIGTERM and SIGINT and stops cleanly. A listener here too
        // keeps Deno from ending the whole process on the signal before the Worker's has run.
        const keep = () => {};
        for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, keep);
        return await runRole({
          role: "core",
          permissions: corePermissions(config),
          entry: serveEntry,
          args: { config, acceptBreak: options.acceptBreak === true },
        });
      })
    );
}

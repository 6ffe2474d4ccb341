/** `gurt portal`: prints a one-time link that signs the owner in to the portal. */
import type { Command } from "commander";
import { runRole } from "../roles/mod.ts";
import { configFor, exitWith, loadModule } from "./run.ts";

/** Registers `gurt portal`. */
export function registerPortalCommand(program: Command): void {
  program
    .command("portal")
    .description("print a one-time link that signs you in to the owner's portal")
    .action((_options, command: Command) =>
      exitWith(async () => {
        const config = configFor(command);
        const { portalLinkPermissions } = await loadModule<typeof import("../portal/mod.ts")>(
          new URL("../portal/mod.ts", import.meta.url),
        );
        return await runRole({
          role: "cli",
          permissions: portalLinkPermissions(config),
          entry: new URL("./portal_main.ts", import.meta.url),
          args: { home: config.home },
        });
      })
    );
}

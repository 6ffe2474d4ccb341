/** `gurt portal`: prints a one-time link that signs the owner in to the portal. */
import type { Command } from "commander";
import { portalLinkPermissions } from "../portal/mod.ts";
import { runRole } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

/** Registers `gurt portal`. */
export function registerPortalCommand(program: Command): void {
  program
    .command("portal")
    .description("print a one-time link that signs you in to the owner's portal")
    .action((_options, command: Command) =>
      exitWith(() => {
        const config = configFor(command);
        return runRole({
          role: "cli",
          permissions: portalLinkPermissions(config),
          entry: new URL("./portal_main.ts", import.meta.url),
          args: { home: config.home },
        });
      })
    );
}

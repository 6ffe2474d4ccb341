/** `gurt portal`: prints a one-time link that signs the owner in to the portal. */
import type { Command } from "commander";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

/** Registers `gurt portal`. */
export function registerPortalCommand(program: Command): void {
  program
    .command("portal")
    .description("print a one-time link that signs you in to the owner's portal")
    .action((_options, command: Command) =>
      exitWith(() => {
        const config = configFor(command);
        return launchRole(ROLE_TABLE.portal, { places: { config }, args: { home: config.home } });
      })
    );
}

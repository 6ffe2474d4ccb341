/**
 * `gurt portal`: prints a one-time link that signs the owner in to the portal. `gurt portal-serve`
 * (not in --help): the portal itself, in its own role, as `gurt serve` starts and watches it.
 */
import type { Command } from "commander";
import { adminSocketPath } from "../config/mod.ts";
import type { PortalArgs } from "../portal/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

/** Registers `gurt portal` and `gurt portal-serve`. */
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
  program
    .command("portal-serve", { hidden: true })
    .description("the owner's portal, as gurt serve starts and watches it")
    .requiredOption("--listen <host:port>", "the loopback address to listen on ([portal] listen)")
    .action((options: { listen: string }, command: Command) =>
      exitWith(() => {
        const { home } = configFor(command);
        const args: PortalArgs = { home, listen: options.listen, socket: adminSocketPath(home) };
        return launchRole(ROLE_TABLE["portal-serve"], {
          places: { home, listen: options.listen },
          args,
        });
      })
    );
}

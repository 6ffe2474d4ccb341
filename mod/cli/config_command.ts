/** `gurt config`: prints the configuration gurt.toml gives now, after defaults and overrides. */
import type { Command } from "commander";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

/** Registers `gurt config`. */
export function registerConfigCommand(program: Command): void {
  program
    .command("config")
    .description(
      "print the configuration as gurt.toml gives it now (box home, vault, gurt.toml with defaults); gurt serve reads it when it starts",
    )
    .action((_options, command: Command) =>
      exitWith(() => {
        const config = configFor(command);
        return launchRole(ROLE_TABLE.config, { places: { config }, args: config });
      })
    );
}

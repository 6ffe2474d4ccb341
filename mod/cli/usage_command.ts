/** `gurt usage [--since DATE]`: the model spend of every task, by model. */
import type { Command } from "commander";
import { adminSocketPath } from "../config/mod.ts";
import type { UsageArgs } from "../owner/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

/** Registers `gurt usage`. */
export function registerUsageCommand(program: Command): void {
  program.command("usage")
    .description("show every task's model spend by model: tokens of each kind, requests, cost")
    .option("--since <date>", "only answers from this date (2026-12-01, UTC) or time on")
    .action((options: { since?: string }, command: Command) =>
      exitWith(() => {
        const config = configFor(command);
        const socket = adminSocketPath(config.home);
        const args: UsageArgs = { socket, action: "usage", since: options.since };
        // The role of `gurt task`, whose entry prints this too.
        return launchRole(ROLE_TABLE.task, { places: { config }, args });
      })
    );
}

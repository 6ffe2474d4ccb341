/** `gurt app-host MODULE`: a module app served as an MCP server on stdio (the app-host role). */
import type { Command } from "commander";
import { runAppHost } from "./app_host_start.ts";
import { exitWith } from "./run.ts";

/**
 * Registers `gurt app-host`. main.ts runs a plain `gurt app-host MODULE` through app_host_start.ts
 * without loading the CLI; this is the same command for `--help` and for a mistake's message.
 */
export function registerAppHostCommand(program: Command): void {
  program
    .command("app-host")
    .description(
      "serves a module app (docs/app-sdk.md) as an MCP server on stdio; the core starts it in " +
        "the app's sandbox (GURT_APP_HOME, GURT_APP_HOSTS, GURT_APP_SECRET_<NAME>)",
    )
    .argument("<module>", "the app's module file (app.ts or app.js)")
    .action((module: string) => exitWith(() => runAppHost(module)));
}

/** Shared plumbing for commands: load the configuration, exit with the role's status, load lazily. */
import type { Command } from "commander";
import { type Config, ConfigError, loadConfig, processPathInputs } from "../config/mod.ts";

/** The configuration for a command, from the program's `--home` and the environment. */
export function configFor(command: Command): Config {
  const options = command.optsWithGlobals<{ home?: string }>();
  return loadConfig(processPathInputs(options.home));
}

/** Runs `work` and exits with its status; a ConfigError or plain Error prints one line, status 1. */
export async function exitWith(work: () => Promise<number>): Promise<never> {
  let status: number;
  try {
    status = await work();
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    console.error(error instanceof ConfigError ? error.message : `gurt: ${error.message}`);
    status = 1;
  }
  Deno.exit(status);
}

/**
 * Loads a module when a command runs, not when `gurt` starts. Deno prepares the whole graph of
 * every import of a string at start, dynamic ones included, so each command paid for every other's
 * (the guest's Hono and X11, the MCP SDK, the portal: about 150 ms before any command ran). The
 * caller names the module's type with `typeof import(...)`, which `deno check` checks and which
 * loads nothing.
 */
export function loadModule<M>(url: URL): Promise<M> {
  return import(url.href);
}

/**
 * `gurt app add PATH|npm:PACKAGE@VERSION [--name NAME]`, `list`, `show NAME`, `remove NAME`,
 * `enable NAME`, `disable NAME`, `reload NAME` and `check`: the owner's apps, through the core's /apps routes.
 */
import type { Command } from "commander";
import { adminSocketPath } from "../config/mod.ts";
import type { AppArgs } from "../owner/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

/** Registers `gurt app …`. */
export function registerAppCommand(program: Command): void {
  const app = program
    .command("app")
    .description(
      "add, list, show, remove, enable, disable, reload and check the apps whose tools tasks call",
    );
  app
    .command("add")
    .argument("<source>", "a folder holding app.toml, or npm:PACKAGE@VERSION with an exact version")
    .option(
      "--name <name>",
      "the app's name, before the dot of its tools' names (default: the folder's name)",
    )
    .description(
      "install an app: the core puts it in place, starts it once to list its tools, and offers them",
    )
    .action((source: string, options: { name?: string }, command: Command) =>
      exitWith(() => {
        if (source.startsWith("npm:")) {
          if (options.name === undefined) {
            throw new Error(`gurt app add ${source} needs --name NAME: the app's name`);
          }
          return run(command, { action: "add", name: options.name, npm: source });
        }
        // The folder is the one path outside the box home this command reads.
        const folder = absolute(source);
        const name = options.name ?? lastPart(folder);
        return run(command, { action: "add", name, folder }, [folder]);
      })
    );
  app
    .command("list")
    .description("list the apps: kind, whether on, state, tools and last error")
    .action((_options, command: Command) => exitWith(() => run(command, { action: "list" })));
  app
    .command("show")
    .argument("<name>", "the app's name")
    .description(
      "show an app: its state, tools and their input, keys (set or not), hosts and left-out tools",
    )
    .action((name: string, _options, command: Command) =>
      exitWith(() => run(command, { action: "show", name }))
    );
  for (const action of ["remove", "enable", "disable", "reload"] as const) {
    app
      .command(action)
      .argument("<name>", "the app's name")
      .description(
        action === "remove"
          ? "remove an app: its tools go, its server stops, its folder is deleted"
          : action === "enable"
          ? "offer a disabled app's tools again"
          : action === "disable"
          ? "stop offering an app's tools (its folder stays); calls of them are refused"
          : "read an app's edited app.toml again and restart its server with it",
      )
      .action((name: string, _options, command: Command) =>
        exitWith(() => run(command, { action, name }))
      );
  }
  app
    .command("check")
    .argument("[folder]", "an app's folder to check before it is added (its app.toml)")
    .description(
      "read every app's app.toml again (or FOLDER's): each problem as <file>:<line>: <problem>, or apps: ok",
    )
    .action((folder: string | undefined, _options, command: Command) =>
      exitWith(() => {
        if (folder === undefined) return run(command, { action: "check" });
        const path = absolute(folder);
        return run(command, { action: "check", folder: path }, [path]);
      })
    );
}

type Action =
  | { action: "add"; name: string; folder: string }
  | { action: "add"; name: string; npm: string }
  | { action: "list" | "check" }
  | { action: "check"; folder: string }
  | { action: "show" | "remove" | "enable" | "disable" | "reload"; name: string };

function run(command: Command, action: Action, files: string[] = []): Promise<number> {
  const config = configFor(command);
  const args = { socket: adminSocketPath(config.home), ...action } as AppArgs;
  return launchRole(ROLE_TABLE.app, { places: { config, files }, args });
}

function absolute(path: string): string {
  const joined = path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
  const parts: string[] = [];
  for (const part of joined.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return `/${parts.join("/")}`;
}

function lastPart(folder: string): string {
  return folder.slice(folder.lastIndexOf("/") + 1);
}

/** `gurt vault set NAME`, `rm NAME`, `list`, `deny APP NAME`, `allow APP NAME`. */
import type { Command } from "commander";
import { checkKeyName } from "../vault/mod.ts";
import { adminSocketPath } from "./permissions.ts";
import { configFor, exitWith, runCliRole } from "./run.ts";
import { readSecretValue } from "./secret_input.ts";
import type { VaultArgs } from "./vault_main.ts";

const entry = new URL("./vault_main.ts", import.meta.url);

/** Registers `gurt vault …`. */
export function registerVaultCommand(program: Command): void {
  const vault = program
    .command("vault")
    .description("set, remove and list the vault's keys; turn a key off for one app");
  vault
    .command("set")
    .argument("<name>", "the key's name, such as STRIPE_SECRET_KEY")
    .description("set a key; the value is read from standard input, or a prompt that does not echo")
    .action((name: string, _options, command: Command) =>
      run(command, async () => {
        checkKeyName(name);
        const value = await readSecretValue(name);
        if (value === "") throw new Error(`no value was given for ${name}; nothing was set`);
        return { action: "set", name, value };
      })
    );
  vault
    .command("rm")
    .argument("<name>", "the key's name")
    .description("remove a key")
    .action((name: string, _options, command: Command) =>
      run(command, () => Promise.resolve({ action: "rm", name: checkKeyName(name) }))
    );
  vault
    .command("list")
    .description("list the keys' names, when each was set, and the apps each is turned off for")
    .action((_options, command: Command) =>
      run(command, () => Promise.resolve({ action: "list" }))
    );
  for (const action of ["deny", "allow"] as const) {
    vault
      .command(action)
      .argument("<app>", "the app, as before the dot of its tools' names")
      .argument("<name>", "the key's name")
      .description(
        action === "deny"
          ? "turn one key off for one app: its tools' secret(NAME) then throws"
          : "turn a key denied to an app back on",
      )
      .action((app: string, name: string, _options, command: Command) =>
        run(command, () => Promise.resolve({ action, app, name: checkKeyName(name) }))
      );
  }
}

type Action =
  | { action: "set"; name: string; value: string }
  | { action: "rm"; name: string }
  | { action: "list" }
  | { action: "deny" | "allow"; app: string; name: string };

function run(command: Command, action: () => Promise<Action>): Promise<never> {
  return exitWith(async () => {
    const config = configFor(command);
    const args: VaultArgs = { socket: adminSocketPath(config.home), ...(await action()) };
    return runCliRole(config, entry, args);
  });
}

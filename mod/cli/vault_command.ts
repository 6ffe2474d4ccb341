/** `gurt vault set NAME`, `rm NAME`, `list`, `deny APP NAME`, `allow APP NAME`. */
import type { Command } from "commander";
import { adminSocketPath } from "../config/mod.ts";
import type { VaultArgs } from "../owner/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith, loadModule } from "./run.ts";
import { readSecretValue } from "./secret_input.ts";

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
        await keyName(name);
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
      run(command, async () => ({ action: "rm", name: await keyName(name) }))
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
        run(command, async () => ({ action, app, name: await keyName(name) }))
      );
  }
}

type Action =
  | { action: "set"; name: string; value: string }
  | { action: "rm"; name: string }
  | { action: "list" }
  | { action: "deny" | "allow"; app: string; name: string };

/** The key's name, if the vault accepts it; the vault's module is loaded only by a vault command. */
async function keyName(name: string): Promise<string> {
  const { checkKeyName } = await loadModule<typeof import("../vault/mod.ts")>(
    new URL("../vault/mod.ts", import.meta.url),
  );
  return checkKeyName(name);
}

function run(command: Command, action: () => Promise<Action>): Promise<never> {
  return exitWith(async () => {
    const config = configFor(command);
    const args: VaultArgs = { socket: adminSocketPath(config.home), ...(await action()) };
    return launchRole(ROLE_TABLE.vault, { places: { config }, args });
  });
}

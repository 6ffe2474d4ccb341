/** The CLI role's side of `gurt vault …`, over the admin socket. It never prints a value. */
import { AdminClient } from "../admin/mod.ts";

/** What the owner asked. */
export type VaultArgs =
  | { socket: string; action: "set"; name: string; value: string }
  | { socket: string; action: "rm"; name: string }
  | { socket: string; action: "list" }
  | { socket: string; action: "deny" | "allow"; app: string; name: string };

/** Prints the answer; exit status 1 when the core refused. */
export default async function main(args: VaultArgs): Promise<number> {
  const admin = new AdminClient(args.socket);
  if (args.action === "list") {
    const answer = await admin.vaultKeys();
    if (!answer.ok) return failed(args.action, answer.error);
    const keys = answer.value.keys;
    if (keys.length === 0) console.log("no vault keys set");
    const width = Math.max(0, ...keys.map((key) => key.name.length));
    for (const key of keys) {
      const denied = key.denied_apps.length > 0 ? `  off for ${key.denied_apps.join(", ")}` : "";
      console.log(`${key.name.padEnd(width)}  set ${key.set}${denied}`);
    }
    return 0;
  }
  if (args.action === "set") {
    const answer = await admin.setKey(args.name, args.value);
    if (!answer.ok) return failed(args.action, answer.error);
    console.log(`set ${args.name}`);
    return 0;
  }
  if (args.action === "rm") {
    const answer = await admin.removeKey(args.name);
    if (!answer.ok) return failed(args.action, answer.error);
    console.log(`removed ${args.name}`);
    return 0;
  }
  const denied = args.action === "deny";
  const answer = await admin.setKeyUse(args.name, { app: args.app, denied });
  if (!answer.ok) return failed(args.action, answer.error);
  console.log(
    denied ? `${args.name} is off for ${args.app}` : `${args.name} is on again for ${args.app}`,
  );
  return 0;
}

function failed(action: string, error: string): number {
  console.error(`gurt vault ${action}: ${error}`);
  return 1;
}

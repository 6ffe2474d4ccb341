/** The CLI role's side of `gurt vault …`, over the admin socket. It never prints a value. */
import { admin, errorOf } from "./admin_client.ts";

/** What the owner asked. */
export type VaultArgs =
  | { socket: string; action: "set"; name: string; value: string }
  | { socket: string; action: "rm"; name: string }
  | { socket: string; action: "list" }
  | { socket: string; action: "deny" | "allow"; app: string; name: string };

interface Listed {
  name: string;
  set: string;
  denied_apps: string[];
}

/** Prints the answer; exit status 1 when the core refused. */
export default async function main(args: VaultArgs): Promise<number> {
  if (args.action === "list") {
    const answer = await admin(args.socket, { method: "GET", path: "/api/vault" });
    if (answer.status !== 200) return failed(args.action, answer.body);
    const keys = answer.body.keys as Listed[];
    if (keys.length === 0) console.log("no vault keys set");
    const width = Math.max(0, ...keys.map((key) => key.name.length));
    for (const key of keys) {
      const denied = key.denied_apps.length > 0 ? `  off for ${key.denied_apps.join(", ")}` : "";
      console.log(`${key.name.padEnd(width)}  set ${key.set}${denied}`);
    }
    return 0;
  }
  const path = `/api/vault/${encodeURIComponent(args.name)}`;
  if (args.action === "set") {
    const answer = await admin(args.socket, { method: "PUT", path, body: { value: args.value } });
    if (answer.status !== 200) return failed(args.action, answer.body);
    console.log(`set ${args.name}`);
    return 0;
  }
  if (args.action === "rm") {
    const answer = await admin(args.socket, { method: "DELETE", path });
    if (answer.status !== 200) return failed(args.action, answer.body);
    console.log(`removed ${args.name}`);
    return 0;
  }
  const answer = await admin(args.socket, {
    method: "POST",
    path: `${path}/${args.action}`,
    body: { app: args.app },
  });
  if (answer.status !== 200) return failed(args.action, answer.body);
  console.log(
    args.action === "deny"
      ? `${args.name} is off for ${args.app}`
      : `${args.name} is on again for ${args.app}`,
  );
  return 0;
}

function failed(action: string, body: Record<string, unknown>): number {
  console.error(`gurt vault ${action}: ${errorOf(body)}`);
  return 1;
}

/** `gurt egress-tunnel`: the laptop's end of the guest's egress tunnel (docs/egress-tunnel.md). */
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { exitWith } from "./run.ts";

interface EgressTunnelOptions {
  ws: string;
  tokenFile: string;
  allow?: string;
  denyPrivate?: boolean;
}

/** Registers `gurt egress-tunnel`. */
export function registerEgressTunnelCommand(program: Command): void {
  program
    .command("egress-tunnel")
    .description(
      "attach to a guest's egress tunnel and carry its browser's connections from this machine",
    )
    .requiredOption(
      "--ws <url>",
      "the guest's WebSocket as you published it (ws:// or wss://)",
      url,
    )
    .requiredOption("--token-file <file>", "a file whose first line is the tunnel's token")
    .option(
      "--allow <hosts>",
      "comma-separated hosts, *.suffix, addresses or IPv4 CIDRs (default: any public host; " +
        "private and loopback addresses only when listed)",
    )
    .option("--deny-private", "refuse private and loopback addresses even when --allow lists them")
    .action((options: EgressTunnelOptions) =>
      exitWith(() =>
        launchRole(ROLE_TABLE["egress-tunnel"], {
          places: { tokenFile: options.tokenFile },
          args: {
            ws: options.ws,
            tokenFile: options.tokenFile,
            allow: (options.allow ?? "").split(",").map((h) => h.trim()).filter((h) => h !== ""),
            denyPrivate: options.denyPrivate === true,
          },
        })
      )
    );
}

function url(value: string): string {
  if (!/^wss?:\/\/[^/\s]+/.test(value)) {
    throw new InvalidArgumentError("--ws is a ws:// or wss:// URL.");
  }
  return value;
}

/** `gurt dev model-stand-in`: tools for trying gurt out, not for a box's work. */
import { type Command, InvalidArgumentError } from "commander";
import type { StandInArgs } from "../stand-in/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { exitWith } from "./run.ts";

/** Registers `gurt dev …`. */
export function registerDevCommand(program: Command): void {
  const dev = program.command("dev").description("tools for trying gurt out offline");
  dev
    .command("model-stand-in")
    .description(
      "serve a scripted stand-in for the model services on a loopback port (Anthropic Messages, " +
        "OpenAI Responses and Chat Completions, streamed or whole): it calls example.echo once, " +
        "then answers with the result; any key is accepted",
    )
    .option("--port <port>", "the port (0: any free one)", port, 8089)
    .option("--host <address>", "127.0.0.1, ::1 or localhost", loopback, "127.0.0.1")
    .action((options: { port: number; host: string }) =>
      exitWith(() => {
        const args: StandInArgs = { hostname: options.host, port: options.port };
        return launchRole(ROLE_TABLE["model-stand-in"], { places: args, args });
      })
    );
}

function port(value: string): number {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) {
    throw new InvalidArgumentError("a port is a whole number from 0 to 65535.");
  }
  return Number(value);
}

function loopback(value: string): string {
  if (!["127.0.0.1", "::1", "localhost"].includes(value)) {
    throw new InvalidArgumentError(
      "the stand-in listens on loopback only: 127.0.0.1, ::1 or localhost.",
    );
  }
  return value;
}

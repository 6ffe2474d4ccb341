/** `gurt loop`: the model loop worker of a task, run in the worker role on BOX_SOCKET. */
import type { Command } from "commander";
import type { LoopArgs } from "../loop/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { exitWith } from "./run.ts";

/** Registers `gurt loop`. */
export function registerLoopCommand(program: Command): void {
  program
    .command("loop")
    .description("the model loop worker of a task (started by gurt serve; needs BOX_SOCKET)")
    .action(() =>
      exitWith(() => {
        const socket = Deno.env.get("BOX_SOCKET");
        const task = Deno.env.get("BOX_TASK");
        if (socket === undefined || task === undefined) {
          throw new Error("gurt loop runs inside a task: BOX_SOCKET and BOX_TASK must be set");
        }
        const args: LoopArgs = { socket, task };
        return launchRole(ROLE_TABLE.loop, { places: { socket }, args });
      })
    );
}

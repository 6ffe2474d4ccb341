/**
 * `gurt loop`: the model loop worker of a task, run in the worker role on BOX_SOCKET, with its
 * task's model endpoint (ANTHROPIC_BASE_URL, OPENAI_BASE_URL) the one host it may reach.
 */
import type { Command } from "commander";
import { endpointHosts, endpointsFromEnv, type LoopArgs } from "../loop/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { exitWith } from "./run.ts";

/** Registers `gurt loop`. */
export function registerLoopCommand(program: Command): void {
  program
    .command("loop")
    .description(
      "the model loop worker of a task (started by gurt serve; needs BOX_SOCKET and the task's model endpoint)",
    )
    .action(() =>
      exitWith(() => {
        const socket = Deno.env.get("BOX_SOCKET");
        const task = Deno.env.get("BOX_TASK");
        if (socket === undefined || task === undefined) {
          throw new Error("gurt loop runs inside a task: BOX_SOCKET and BOX_TASK must be set");
        }
        const endpoints = endpointsFromEnv((name) => Deno.env.get(name));
        if ("problem" in endpoints) {
          throw new Error(`gurt loop runs inside a task: ${endpoints.problem}`);
        }
        const args: LoopArgs = { socket, task, endpoints };
        const places = { socket, modelEndpoints: endpointHosts(endpoints) };
        return launchRole(ROLE_TABLE.loop, { places, args });
      })
    );
}

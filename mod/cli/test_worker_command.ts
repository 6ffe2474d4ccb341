/** `gurt test-worker --script F`: the test worker, run in the worker role on BOX_SOCKET. */
import type { Command } from "commander";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import type { TestWorkerArgs } from "../workers/mod.ts";
import { exitWith } from "./run.ts";

/** Registers `gurt test-worker`. */
export function registerTestWorkerCommand(program: Command): void {
  program
    .command("test-worker")
    .description("the test worker: runs one broker request per line of a script (BOX_SOCKET)")
    .requiredOption("--script <file>", "the script: METHOD PATH [JSON] per line")
    .action((options: { script: string }) =>
      exitWith(() => {
        const socket = Deno.env.get("BOX_SOCKET");
        const task = Deno.env.get("BOX_TASK");
        if (socket === undefined || task === undefined) {
          throw new Error(
            "the test worker runs inside a task: BOX_SOCKET and BOX_TASK must be set",
          );
        }
        const script = options.script.startsWith("/")
          ? options.script
          : `${Deno.cwd()}/${options.script}`;
        const args: TestWorkerArgs = { socket, task, script };
        return launchRole(ROLE_TABLE["test-worker"], { places: { socket, files: [script] }, args });
      })
    );
}

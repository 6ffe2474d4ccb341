/** gurt: one binary, one subcommand per role. Parses the command and runs its role. */
import { buildProgram } from "./mod/cli/program.ts";
import { beforeCommand } from "./mod/cli/task_command.ts";

if (import.meta.main) {
  // What follows `--` is the command of `gurt task start --worker cmd -- COMMAND…`, read there;
  // given to the parser, its words would be taken for the task's prompt.
  await buildProgram().parseAsync(beforeCommand(Deno.args), { from: "user" });
}

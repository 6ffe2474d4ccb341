/** gurt: one binary, one subcommand per role. Parses the command and runs its role. */
import { beforeCommand, buildProgram } from "./mod/cli/mod.ts";

if (import.meta.main) {
  // What follows `--` is the command of `gurt task start --worker cmd -- COMMAND…`, read there;
  // given to the parser, its words would be taken for the task's prompt.
  await buildProgram().parseAsync(beforeCommand(Deno.args), { from: "user" });
}

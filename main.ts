/** gurt: one binary, one subcommand per role. Parses the command and runs its role. */
import { buildProgram } from "./mod/cli/program.ts";

if (import.meta.main) {
  await buildProgram().parseAsync(Deno.args, { from: "user" });
}

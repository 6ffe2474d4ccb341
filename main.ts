/** gurt: one binary, one subcommand per role. Parses the command and runs its role. */
import { mcpMain, plainMcpOptions } from "./mod/cli/mcp_start.ts";
import { appHostMain, plainAppHostModule } from "./mod/cli/app_host_start.ts";

if (import.meta.main) {
  // `gurt mcp` answers its agent within 150 ms of starting, so it starts before the rest of the
  // command line loads (mod/cli/mcp_start.ts). The CLI is imported by a URL, which Deno does not
  // prepare at start as it does an import of a string.
  const mcp = plainMcpOptions(Deno.args);
  if (mcp !== null) await mcpMain(mcp);
  // The core starts a module app at its first call, which waits for it: the same light start.
  const appModule = plainAppHostModule(Deno.args);
  if (appModule !== null) await appHostMain(appModule);
  const cli: typeof import("./mod/cli/mod.ts") = await import(
    new URL("./mod/cli/mod.ts", import.meta.url).href
  );
  // What follows `--` is the command of `gurt task start --worker cmd -- COMMAND…`, read there;
  // given to the parser, its words would be taken for the task's prompt.
  await cli.buildProgram().parseAsync(cli.beforeCommand(Deno.args), { from: "user" });
}

/** The `gurt` command line: one commander program, one subcommand family per role. */
import { Command } from "commander";
import denoJson from "../../deno.json" with { type: "json" };
import { registerAuditCommand } from "./audit_command.ts";
import { registerConfigCommand } from "./config_command.ts";
import { registerGrantsCommand } from "./grants_command.ts";
import { registerApprovalCommands } from "./approvals_command.ts";
import { registerServeCommand } from "./serve_command.ts";
import { registerTaskCommands } from "./task_command.ts";
import { registerUsageCommand } from "./usage_command.ts";
import { registerTestWorkerCommand } from "./test_worker_command.ts";
import { registerGuestCommand } from "./guest_command.ts";
import { registerVaultCommand } from "./vault_command.ts";
import { registerAppCommand } from "./app_command.ts";
import { registerPortalCommand } from "./portal_command.ts";
import { registerLoopCommand } from "./loop_command.ts";
import { registerMcpCommand } from "./mcp_command.ts";
import { registerAppHostCommand } from "./app_host_command.ts";
import { registerAgentRunCommand } from "./agent_run_command.ts";
import { registerEgressTunnelCommand } from "./egress_tunnel_command.ts";
import { registerToolsCommand } from "./tools_command.ts";
import { registerDevCommand } from "./dev_command.ts";
import { versionLine } from "./version_line.ts";

/** Builds the whole `gurt` program; each family registers its own subcommands. */
export function buildProgram(): Command {
  const program = new Command("gurt")
    .description(
      "gurt lets AI agents work on your machine without holding a secret and without acting unseen.",
    )
    .version(
      versionLine(denoJson.version),
      "-V, --version",
      "print gurt's version, its form (checkout, self-extracting or compiled) and its Deno",
    )
    .option(
      "--home <dir>",
      "the box home (default: BOX_HOME, else /var/lib/gurt as root, else $XDG_DATA_HOME/gurt)",
    )
    .showHelpAfterError()
    // Each subcommand's --help lists --home too: `gurt serve --home DIR` is how README starts one.
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({ outputError: (text, write) => write(text) });
  registerServeCommand(program);
  registerTaskCommands(program);
  registerUsageCommand(program);
  registerApprovalCommands(program);
  registerConfigCommand(program);
  registerAuditCommand(program);
  registerGrantsCommand(program);
  registerTestWorkerCommand(program);
  registerGuestCommand(program);
  registerVaultCommand(program);
  registerAppCommand(program);
  registerPortalCommand(program);
  registerLoopCommand(program);
  registerMcpCommand(program);
  registerAppHostCommand(program);
  registerAgentRunCommand(program);
  registerEgressTunnelCommand(program);
  registerToolsCommand(program);
  registerDevCommand(program);
  return program;
}

/** `gurt approvals`, `gurt approve ID`, `gurt refuse ID [--reason TEXT]`. */
import type { Command } from "commander";
import { adminSocketPath } from "../config/mod.ts";
import type { ApprovalsArgs } from "../owner/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

/** Registers the approval commands. */
export function registerApprovalCommands(program: Command): void {
  program
    .command("approvals")
    .description("list the approvals waiting for you: each task's oldest 3, and how many more")
    .option("--task <id>", "list every approval of this task")
    .action((options: { task?: string }, command: Command) =>
      run(command, () => ({ action: "list", task: options.task ?? null }))
    );
  program
    .command("approve")
    .argument("<id>", "the approval's number, as `gurt approvals` shows it")
    .description("approve a pending call; it is decided again with the grants as they are now")
    .action((id: string, _options, command: Command) =>
      run(command, () => ({ action: "approve", id: parseId(id) }))
    );
  program
    .command("refuse")
    .argument("<id>", "the approval's number")
    .option("--reason <text>", "why, kept in the audit log")
    .description("refuse a pending call")
    .action((id: string, options: { reason?: string }, command: Command) =>
      run(command, () => ({ action: "refuse", id: parseId(id), reason: options.reason ?? null }))
    );
}

type Action =
  | { action: "list"; task: string | null }
  | { action: "approve"; id: number }
  | { action: "refuse"; id: number; reason: string | null };

function run(command: Command, action: () => Action): Promise<never> {
  return exitWith(() => {
    const config = configFor(command);
    const args = { socket: adminSocketPath(config.home), ...action() } as ApprovalsArgs;
    return launchRole(ROLE_TABLE.approvals, { places: { config }, args });
  });
}

function parseId(text: string): number {
  if (!/^(0|[1-9][0-9]{0,15})$/.test(text)) {
    throw new Error(
      `${JSON.stringify(text)} is not an approval id: give the number gurt approvals shows`,
    );
  }
  return Number(text);
}

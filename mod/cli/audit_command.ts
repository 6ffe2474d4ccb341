/** `gurt audit verify [--checkpoint FILE]` and `gurt audit checkpoint`: the owner reads the log. */
import type { Command } from "commander";
import { startHasher } from "../audit/verify.ts";
import type { AuditArgs } from "../owner/mod.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import { configFor, exitWith } from "./run.ts";

/** Registers `gurt audit verify` and `gurt audit checkpoint`. */
export function registerAuditCommand(program: Command): void {
  const audit = program
    .command("audit")
    .description("check the hash-chained audit log, reading its files with no daemon");
  audit
    .command("verify")
    .description("verify the whole audit log and list what the owner should know")
    .option(
      "--checkpoint <file>",
      "fail if a line of this file (from gurt audit checkpoint) is gone",
    )
    .action((options: { checkpoint?: string }, command: Command) =>
      exitWith(() => runAudit(command, { action: "verify", checkpoint: options.checkpoint }))
    );
  audit
    .command("checkpoint")
    .description("print the head record as one line to keep off the box: <seq> <file> <sha256>")
    .action((_options, command: Command) =>
      exitWith(() => runAudit(command, { action: "checkpoint" }))
    );
}

async function runAudit(
  command: Command,
  request: { action: "verify" | "checkpoint"; checkpoint?: string },
): Promise<number> {
  // Both actions verify the whole log. The hasher Worker holds no permission and reads nothing:
  // the role sends it the lines it read. It starts first, while the configuration loads.
  const hasher = startHasher();
  try {
    return await runAuditRole(command, request, hasher.port);
  } finally {
    hasher.worker.terminate();
  }
}

function runAuditRole(
  command: Command,
  request: { action: "verify" | "checkpoint"; checkpoint?: string },
  hasher: MessagePort,
): Promise<number> {
  const config = configFor(command);
  const checkpoint = request.checkpoint === undefined
    ? null
    : request.checkpoint.startsWith("/")
    ? request.checkpoint
    : `${Deno.cwd()}/${request.checkpoint}`;
  const args: AuditArgs = { home: config.home, action: request.action, checkpoint, hasher };
  // The checkpoint file is the one path outside the box home this command reads, so the CLI
  // role's read list gains exactly that file for this run.
  const files = checkpoint === null ? [] : [checkpoint];
  return launchRole(ROLE_TABLE.audit, { places: { config, files }, args, transfer: [hasher] });
}

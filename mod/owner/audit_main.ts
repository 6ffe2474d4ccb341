/** The CLI role's side of `gurt audit verify` and `gurt audit checkpoint`. */
// The read side's own entry: mod.ts would load the writer, zod and node:crypto, which verifying
// with the hasher needs only to describe a line that is not a record.
import { checkpointOf, verifyHome, verifyLines } from "../audit/verify.ts";

/** What the command passes to the CLI role. */
export interface AuditArgs {
  home: string;
  action: "verify" | "checkpoint";
  /** The checkpoint file, an absolute path, for `verify --checkpoint`. */
  checkpoint: string | null;
  /** The port of the hasher Worker the command started, moved to this role. */
  hasher: MessagePort;
}

/** Verifies the log and prints the report, or prints the head as a checkpoint line. */
export default async function main(args: AuditArgs): Promise<number> {
  const report = await verifyHome(args.home, {
    checkpoint: args.action === "verify" ? args.checkpoint ?? undefined : undefined,
    hasher: args.hasher,
  });
  args.hasher.close();
  if (args.action === "verify") {
    const { lines, status } = verifyLines(report);
    for (const line of lines) (status === 0 ? console.log : console.error)(line);
    return status;
  }
  if (report.failure !== null) {
    for (const line of verifyLines(report).lines) console.error(line);
    console.error("gurt audit checkpoint: no checkpoint is printed for a broken chain");
    return 1;
  }
  const line = checkpointOf(report);
  if (line === null) {
    console.error(
      `gurt audit checkpoint: ${report.dir} holds no audit record yet; nothing to keep`,
    );
    return 1;
  }
  console.log(line);
  return 0;
}

/** Verifies a box home's whole audit log from its files, with no daemon: `gurt audit verify`. */
import { ChainMachine } from "./chain_machine.ts";
import type { ChainReport } from "./chain_report.ts";
import { CheckpointFileError, formatCheckpoint, parseCheckpoints } from "./checkpoint.ts";
import { feedFile, type FileChunks } from "./file_feed.ts";
import { auditDir, listAuditFiles, readShared } from "./files.ts";
import { localHasher, portHasher } from "./line_hasher.ts";

/** A report on a box home's log: the chain report, the directory read, the checkpoint file used. */
export interface HomeReport extends ChainReport {
  dir: string;
  /** The checkpoint file given, if any. */
  checkpoint: string | null;
}

/** Options of verifyHome. */
export interface VerifyHomeOptions {
  /** A file of checkpoint lines the owner kept; each must still be in the chain. */
  checkpoint?: string;
  /**
   * The port of a hasher Worker (startHasher), which then hashes the lines while this thread
   * parses them; without it, this thread hashes them too.
   */
  hasher?: MessagePort;
}

/**
 * Reads every audit file of the home in name order and verifies the whole chain. The report is the
 * one a ChainVerifier fed every file gives (tests/audit/file_feed_test.ts).
 */
export async function verifyHome(
  home: string,
  options: VerifyHomeOptions = {},
): Promise<HomeReport> {
  const dir = auditDir(home);
  const checkpoints = options.checkpoint === undefined
    ? []
    : parseCheckpoints(await readCheckpointFile(options.checkpoint), options.checkpoint);
  const machine = new ChainMachine({ checkpoints });
  const hasher = options.hasher === undefined ? await localHasher() : portHasher(options.hasher);
  const names = await listAuditFiles(dir);
  const read = async (name: string): Promise<FileChunks> => ({
    name,
    chunks: hasher.hashFile(await readShared(`${dir}/${name}`)),
  });
  // The next file is read and handed to the hasher before this one is parsed, so the hasher
  // never waits for a file.
  let next = names.length > 0 ? read(names[0]) : null;
  for (let i = 0; i < names.length; i++) {
    const file = await (next as Promise<FileChunks>);
    next = i + 1 < names.length ? read(names[i + 1]) : null;
    // Awaited at the next turn; until then a failure must not count as an unhandled rejection.
    next?.catch(() => {});
    await feedFile(machine, file);
  }
  return { ...machine.finish(), dir, checkpoint: options.checkpoint ?? null };
}

/** What `gurt audit verify` prints for a report, and its exit status. */
export function verifyLines(report: HomeReport): { lines: string[]; status: number } {
  if (report.failure !== null) {
    const failure = report.failure;
    return {
      lines: [
        `${report.dir}/${failure.file}:${failure.line}: ${failure.what}; ` +
        "see runbook.md#audit-chain-broken",
      ],
      status: 1,
    };
  }
  if (report.checkpoints_missing.length > 0) {
    return {
      lines: report.checkpoints_missing.map((kept) =>
        `checkpoint "${formatCheckpoint(kept)}" from ${report.checkpoint} is no longer in the ` +
        `chain: no verified record ${kept.seq} in ${kept.file} has that hash; ` +
        "see runbook.md#audit-checkpoint-missing"
      ),
      status: 1,
    };
  }
  const lines = [`audit: ok, ${report.records} records, head ${report.head ?? "none"}`];
  for (const at of report.recoveries) {
    lines.push(`recovery at ${at.file}:${at.line}: a torn line, closed by the Recovery after it`);
  }
  for (const at of report.accepted_breaks) {
    lines.push(
      `accepted break at ${at.file}:${at.line}: accepts the broken chain at ` +
        `${at.broke.file}:${at.broke.line}`,
    );
  }
  for (const seq of report.abandoned) lines.push(`approval ${seq}: pending or abandoned`);
  for (const seq of report.unfinished) lines.push(`call ${seq}: running or unfinished`);
  for (const at of report.clock_warnings) {
    lines.push(`clock warning at ${at.file}:${at.line}: the time went backwards`);
  }
  if (report.torn_tail !== null) {
    const torn = report.torn_tail;
    lines.push(
      `torn final line at ${torn.at.file}:${torn.at.line} (${torn.bytes} bytes): a write in ` +
        "progress or a crash; the next gurt serve recovers it",
    );
  }
  if (report.checkpoint !== null) {
    lines.push(`checkpoint: every line of ${report.checkpoint} is in the chain`);
  }
  return { lines, status: 0 };
}

async function readCheckpointFile(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CheckpointFileError(
      `the checkpoint file ${path} cannot be read (${reason}); ` +
        "see runbook.md#audit-checkpoint-missing",
    );
  }
}

/** Verifies a box home's whole audit log from its files, with no daemon: `gurt audit verify`. */
import { ChainMachine } from "./chain_machine.ts";
import type { ChainReport } from "./chain_report.ts";
import { CheckpointFileError, formatCheckpoint, parseCheckpoints } from "./checkpoint.ts";
import { feedFile, type FileChunks } from "./file_feed.ts";
import { auditDir, listAuditFiles, readSharedLines } from "./files.ts";
import {
  type ChunkStream,
  type HashedChunk,
  type LineHasher,
  localHasher,
  portHasher,
} from "./line_hasher.ts";

/** A report on a box home's log: the chain report, the directory read, the checkpoint file used. */
export interface HomeReport extends ChainReport {
  dir: string;
  /** The checkpoint file given, if any. */
  checkpoint: string | null;
  /**
   * Of `abandoned`, the approvals the core keeps open (its table, or the file a stopped core left
   * for its next start to open again): waiting for the owner, not abandoned. Absent: none known.
   */
  waiting?: number[];
}

/**
 * The numbers of the approvals the core keeps open, from `run/approvals-open.json`
 * (mod/core/open_approvals.ts writes it): empty when there is none, or it cannot be read.
 */
export async function keptOpenApprovals(home: string): Promise<number[]> {
  let data: unknown;
  try {
    data = JSON.parse(await Deno.readTextFile(`${home}/run/approvals-open.json`));
  } catch {
    return [];
  }
  const listed = (data as { approvals?: unknown })?.approvals;
  if (!Array.isArray(listed)) return [];
  const numbers: number[] = [];
  for (const one of listed) {
    const approval = (one as { shown?: { approval?: unknown } })?.shown?.approval;
    if (typeof approval === "number" && Number.isSafeInteger(approval)) numbers.push(approval);
  }
  return numbers;
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
  /** About how many bytes of a file are read at a time (the tests make it small); 1 MiB. */
  pieceBytes?: number;
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
  // One file is read at a time, in order, so that the hasher gets its lines in the order they are
  // fed; the next file is read while this one is fed, so the hasher never waits for a file.
  let reading: Promise<void> = Promise.resolve();
  const read = (name: string): FileChunks => {
    const file = readLater(`${dir}/${name}`, hasher, reading, options.pieceBytes);
    reading = file.read;
    return { name, chunks: file.chunks };
  };
  let next = names.length > 0 ? read(names[0]) : null;
  for (let i = 0; i < names.length; i++) {
    const file = next as FileChunks;
    next = i + 1 < names.length ? read(names[i + 1]) : null;
    await feedFile(machine, file);
  }
  const report = machine.finish();
  const kept = new Set(await keptOpenApprovals(home));
  const waiting = report.abandoned.filter((seq) => kept.has(seq));
  const homeReport: HomeReport = { ...report, dir, checkpoint: options.checkpoint ?? null };
  return waiting.length === 0 ? homeReport : { ...homeReport, waiting };
}

/**
 * A file's chunks as the hasher hashes them, read after `after` settles: each run of whole lines
 * goes to the hasher as soon as it is read. `read` settles when the file is read (never rejects:
 * a failure to read is thrown by the chunks, where the feeder reads them).
 */
function readLater(
  path: string,
  hasher: LineHasher,
  after: Promise<void>,
  pieceBytes: number | undefined,
): { chunks: ChunkStream; read: Promise<void> } {
  const chunks = new RunStream();
  const hash = (lines: Uint8Array) => chunks.add(hasher.hashFile(lines));
  const read = after
    .then(() => readSharedLines(path, hash, { pieceBytes }))
    .then(() => chunks.end(), (error) => chunks.fail(error));
  return { chunks, read };
}

/** The chunks of a file handed to the hasher in runs of lines, as they are read: one stream. */
class RunStream implements ChunkStream {
  #runs: ChunkStream[] = [];
  #ended = false;
  #error: unknown = null;
  #failed = false;
  #wake: (() => void) | null = null;

  add(run: ChunkStream): void {
    this.#runs.push(run);
    this.#wakeUp();
  }

  end(): void {
    this.#ended = true;
    this.#wakeUp();
  }

  fail(error: unknown): void {
    this.#failed = true;
    this.#error = error;
    this.#wakeUp();
  }

  async next(): Promise<HashedChunk | null> {
    while (true) {
      if (this.#runs.length > 0) {
        const chunk = await this.#runs[0].next();
        if (chunk !== null) return chunk;
        this.#runs.shift();
      } else if (this.#failed) {
        throw this.#error;
      } else if (this.#ended) {
        return null;
      } else {
        await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    }
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
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
  const waiting = new Set(report.waiting ?? []);
  for (const seq of report.abandoned) {
    lines.push(
      waiting.has(seq)
        ? `approval ${seq}: waiting for the owner`
        : `approval ${seq}: abandoned, no answer recorded (its requester left, or gurt serve ` +
          "stopped with it open before approvals were kept across restarts)",
    );
  }
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

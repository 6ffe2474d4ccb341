/**
 * Checkpoints (docs/audit.md#checkpoints): a hash chain alone does not stop someone with root who
 * truncates the log and rebuilds every prev after it. The owner keeps `<seq> <file> <sha256>` lines
 * off the box; a verification given them fails if any is no longer in the chain.
 */
import type { ChainReport, Checkpoint } from "./chain_report.ts";

const LINE = /^(\d{1,16}) (\d{4}-\d{2}-\d{2}\.jsonl) ([0-9a-f]{64})$/;

/** A checkpoint file that cannot be read as checkpoint lines. */
export class CheckpointFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CheckpointFileError";
  }
}

/** The checkpoint line of a report's head record, or null if the log holds no record. */
export function checkpointOf(report: ChainReport): string | null {
  if (report.head_at === null || report.head === null) return null;
  return formatCheckpoint({
    seq: report.head_at.seq,
    file: report.head_at.file,
    sha256: report.head,
  });
}

/** One checkpoint as the line the owner keeps: `<seq> <file> <sha256>`. */
export function formatCheckpoint(checkpoint: Checkpoint): string {
  return `${checkpoint.seq} ${checkpoint.file} ${checkpoint.sha256}`;
}

/** Parses a checkpoint file: one checkpoint a line; blank lines and lines starting # are skipped. */
export function parseCheckpoints(text: string, source: string): Checkpoint[] {
  const checkpoints: Checkpoint[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = LINE.exec(line);
    if (match === null) {
      throw new CheckpointFileError(
        `${source}:${i + 1}: not a checkpoint line; each line must be "<seq> <file> <sha256>" ` +
          "as gurt audit checkpoint prints it; see runbook.md#audit-checkpoint-missing",
      );
    }
    checkpoints.push({ seq: Number(match[1]), file: match[2], sha256: match[3] });
  }
  if (checkpoints.length === 0) {
    throw new CheckpointFileError(
      `${source} holds no checkpoint line; save the line gurt audit checkpoint prints in it; ` +
        "see runbook.md#audit-checkpoint-missing",
    );
  }
  return checkpoints;
}

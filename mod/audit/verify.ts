/**
 * The audit log's read side, as `gurt audit verify` and `gurt audit checkpoint` load it: a second
 * entry of mod/audit besides mod.ts, which also loads the writer, zod and node:crypto. Nothing here
 * loads zod or node:crypto at start; a role that verifies with a hasher Worker never loads
 * node:crypto, and loads zod only to say what is wrong with a line.
 */
export type {
  AcceptedBreakAt,
  ChainFailure,
  ChainReport,
  Checkpoint,
  HeadRecord,
  Location,
  TornTail,
} from "./chain_report.ts";
export { CheckpointFileError, checkpointOf, formatCheckpoint } from "./checkpoint.ts";
export { type LineHasher, startHasher } from "./line_hasher.ts";
export { type HomeReport, verifyHome, type VerifyHomeOptions, verifyLines } from "./verify_home.ts";

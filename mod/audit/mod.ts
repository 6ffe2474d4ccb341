/**
 * The audit log (docs/audit.md): records chained by SHA-256, one file per UTC date, a single writer
 * that syncs before it answers, a pure verifier, the startup check and owner checkpoints.
 */
export {
  type AuditEvent,
  auditEvent,
  type AuditRecord,
  auditRecord,
  type DecisionOutcome,
  parseRecordLine,
  recordLine,
  type Taint,
  TAINTS,
  ZERO_HASH,
} from "./records.ts";
export { EVENT_FIELDS, isCanonicalRecord } from "./record_check.ts";
export { asciiText, isIsoTime, JsonCursor } from "./json_bytes.ts";
export type {
  AcceptedBreakAt,
  ChainFailure,
  ChainReport,
  Checkpoint,
  HeadRecord,
  Location,
  TornTail,
} from "./chain_report.ts";
export { ChainVerifier, type VerifierOptions } from "./chain_verifier.ts";
export { ChainMachine, type MachineState } from "./chain_machine.ts";
export {
  ALLOWED,
  APPROVAL,
  ASK,
  BREAK,
  type CompactLine,
  compactLine,
  DECISION,
  DENIED,
  hexOf,
  type LineInput,
  OTHER,
  RECOVERY,
  RESULT,
} from "./chain_line.ts";
export { CompactScanner } from "./compact_scanner.ts";
export { libcryptoPath, libcryptoSha256, nodeSha256, type Sha256Into } from "./line_digest.ts";
export { feedFile, type FileChunks } from "./file_feed.ts";
export {
  type ChunkStream,
  hashChunks,
  type HashedChunk,
  hasherPermissions,
  type LineHasher,
  localHasher,
  portHasher,
  startHasher,
  type StartHasherOptions,
} from "./line_hasher.ts";
export {
  AuditChainBrokenError,
  AuditError,
  AuditLockedError,
  AuditNothingToAcceptError,
  AuditUnavailableError,
} from "./errors.ts";
export { type AuditFileOps, AuditWriter, type AuditWriterOptions, realFileOps } from "./writer.ts";
export { checkAtStartup, type StartupReport } from "./startup.ts";
export {
  auditDir,
  fileNameFor,
  listAuditFiles,
  readRange,
  readShared,
  readSharedLines,
} from "./files.ts";
export { sha256Hex } from "./hash.ts";
export {
  CheckpointFileError,
  checkpointOf,
  formatCheckpoint,
  parseCheckpoints,
} from "./checkpoint.ts";
export { AuditLogIndex, type LogIndexOptions, type ReadAt, type RecordPage } from "./log_index.ts";
export { type HomeReport, verifyHome, type VerifyHomeOptions, verifyLines } from "./verify_home.ts";

/** The core's line for a failed audit write, for every path that writes a record. */
import { AuditUnavailableError } from "../audit/mod.ts";

/** The core's line for a failed audit write. */
export function auditFailure(error: unknown): string {
  if (error instanceof AuditUnavailableError) return error.message;
  return `gurt: the audit log could not be written (${
    describe(error)
  }); every call is denied until gurt serve restarts; see runbook.md#audit-unavailable`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

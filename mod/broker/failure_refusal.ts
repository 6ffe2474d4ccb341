/**
 * The box's states that refuse a task's or the owner's request, not bugs: the audit log that can
 * no longer be written (every act refused until restart, docs/audit.md). The sockets' error handler
 * answers it 503 `audit_unavailable` with the log's own sentence, where it was a 500.
 */
import { AuditUnavailableError } from "../audit/mod.ts";
import { HttpError } from "../common/mod.ts";

/** The refusal of `error` if it is the audit log's failure, else null. */
export function failureRefusal(error: Error): HttpError | null {
  if (error instanceof AuditUnavailableError) {
    return new HttpError(503, error.message, "audit_unavailable");
  }
  return null;
}

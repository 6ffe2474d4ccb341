/** The audit log's one writer, as the core's parts see it: the broker and the vault's routes. */
import type { AuditEvent, AuditRecord } from "../audit/mod.ts";

/** The one writer of the audit log, as the core's parts see it. */
export interface AuditAppender {
  /**
   * Places the record in the log's order at the call (synchronously), and resolves once it is
   * written and synced. The broker relies on the order being the order of the calls. An appender
   * that knows the seq the record is placed at tells `placed` at once; one that does not, never.
   */
  append(event: AuditEvent, placed?: (seq: number) => void): Promise<AuditRecord>;
  /** True once a write has failed: the writer takes nothing more until restart (absent: never). */
  readonly failed?: boolean;
}

/**
 * What the core's modules share below any of them: the HTTP error and body reading of the task
 * socket, the admin socket and the vault's routes, an async mutex, durable file writes, redaction
 * of every string in a JSON value, and the audit log's appender as they all see it.
 */
export type { AuditAppender } from "./audit_appender.ts";
export { syncDirectory, syncFile, writeFileAtomic, writeLine } from "./files.ts";
export { parseJsonBody, parseOptionalJsonBody, readBodyBytes } from "./http_body.ts";
export { errorHandler, HttpError } from "./http_error.ts";
export { Mutex } from "./mutex.ts";
export { diskFullText, isDiskFull } from "./disk_full.ts";
export { redactValue } from "./redact_value.ts";
export { centsText } from "./money.ts";
export { lineOfField } from "./toml_line.ts";

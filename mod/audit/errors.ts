/** The audit log's fail-closed errors: each says what to do and names its runbook entry. */

/** An audit error that ends a command: its exit status is part of it. */
export class AuditError extends Error {
  /** The status the process exits with. */
  readonly exitStatus: number;

  constructor(message: string, exitStatus = 1) {
    super(message);
    this.name = new.target.name;
    this.exitStatus = exitStatus;
  }
}

/** Another process holds audit/.lock: a second `gurt serve` on the same box home. */
export class AuditLockedError extends AuditError {
  constructor(lockPath: string) {
    super(
      `gurt serve is already running on this box home: another process holds ${lockPath}; ` +
        "stop it first, or give this one another --home; see runbook.md#serve-already-running",
    );
  }
}

/** The startup check found a broken chain: nothing is written until the owner acts. */
export class AuditChainBrokenError extends AuditError {
  /** The file's name in the audit directory. */
  readonly file: string;
  /** The 1-based line in that file. */
  readonly line: number;
  /** What is wrong with the line. */
  readonly what: string;

  constructor(dir: string, failure: { file: string; line: number; what: string }) {
    super(
      `the audit log's chain is broken at ${dir}/${failure.file}:${failure.line}: ` +
        `${failure.what}; gurt serve writes nothing until it is resolved; ` +
        "see runbook.md#audit-chain-broken",
    );
    this.file = failure.file;
    this.line = failure.line;
    this.what = failure.what;
  }
}

/** `--accept-break` was given, but the whole log verifies: there is no break to accept. */
export class AuditNothingToAcceptError extends AuditError {
  constructor(dir: string) {
    super(
      `nothing to accept: --accept-break was given, but the audit log in ${dir} has no broken ` +
        "chain; start gurt serve without --accept-break; see runbook.md#audit-nothing-to-accept",
      2,
    );
  }
}

/** A write or sync of the audit log failed: the writer refuses every write until restart. */
export class AuditUnavailableError extends AuditError {
  constructor(cause: string) {
    super(
      `the audit log cannot be written (${cause}); every call is denied until gurt serve is ` +
        "restarted; see runbook.md#audit-unavailable",
    );
  }
}

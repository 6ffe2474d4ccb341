/** The audit events the benches' logs are made of: an allowed call and its result, in turn. */
import type { AuditEvent } from "../mod/audit/mod.ts";

/** The decision of record `i`: call-`i` of `session`, example.echo allowed by the grant echo. */
export function allowedEcho(session: string, i: number): AuditEvent {
  return {
    type: "decision",
    session,
    call: `call-${i}`,
    tool: "example.echo",
    arguments: JSON.stringify({ text: `note ${i}` }),
    outcome: { outcome: "allowed" },
    grant: "echo",
    grant_sha256: "0".repeat(64),
    taint: "private",
    untrusted: false,
  };
}

/** The result of record `i`: 20 private bytes answering the decision just before it (`i - 1`). */
export function echoResult(session: string, i: number): AuditEvent {
  return {
    type: "result",
    session,
    call: `call-${i - 1}`,
    decision: i - 1,
    status: "result",
    class: "private",
    untrusted: false,
    truncated: false,
    bytes: 20,
    sha256: "1".repeat(64),
    taint_after: "private",
  };
}

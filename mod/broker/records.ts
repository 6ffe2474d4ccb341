/** The audit events the broker writes, built in one place from the call and the session state. */
import { createHash } from "node:crypto";
import type { AuditEvent } from "../audit/mod.ts";
import type { DataClass, DenyReason, Label, SessionState } from "../policy/mod.ts";

const encoder = new TextEncoder();

/** What a Decision or Approval record says of the outcome. */
export type RecordedOutcome =
  | { outcome: "allowed" }
  | { outcome: "ask" }
  | { outcome: "denied"; reason: DenyReason };

/** The call a record is about. */
export interface CallIds {
  task: string;
  key: string;
  tool: string;
}

/** An outcome with the grant it was decided by and the session state it was decided in. */
export interface DecidedWith {
  outcome: RecordedOutcome;
  grant: string | null;
  grantSha256: string | null;
  state: SessionState;
}

/** A Decision record. */
export function decisionEvent(
  call: CallIds & { arguments: string },
  decided: DecidedWith,
): AuditEvent {
  return {
    type: "decision",
    session: call.task,
    call: call.key,
    tool: call.tool,
    arguments: call.arguments,
    outcome: decided.outcome,
    grant: decided.grant,
    grant_sha256: decided.grantSha256,
    taint: decided.state.taint,
    untrusted: decided.state.untrusted,
  };
}

/** An Approval record: the owner's answer (or the expiry's), and what was decided again. */
export function approvalEvent(
  call: CallIds & { decision: number },
  answered: DecidedWith & {
    answer: "approved" | "refused" | "expired";
    by: string | null;
    reason: string | null;
  },
): AuditEvent {
  return {
    type: "approval",
    session: call.task,
    call: call.key,
    decision: call.decision,
    answer: answered.answer,
    by: answered.by,
    reason: answered.reason,
    outcome: answered.outcome,
    grant: answered.grant,
    grant_sha256: answered.grantSha256,
    taint: answered.state.taint,
    untrusted: answered.state.untrusted,
  };
}

/** A Result record: the content's hash and size, never the content. */
export function resultEvent(
  call: CallIds & { decision: number },
  result: {
    outcome: { status: "result" | "failed"; content: string; truncated: boolean };
    /** The Decision's label: the result's class, and whether it is untrusted. */
    label: Label;
    taintAfter: DataClass;
  },
): AuditEvent {
  const { outcome, label } = result;
  const bytes = encoder.encode(outcome.content);
  return {
    type: "result",
    session: call.task,
    call: call.key,
    decision: call.decision,
    status: outcome.status,
    class: label.resultClass,
    untrusted: label.untrusted,
    truncated: outcome.truncated,
    bytes: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
    taint_after: result.taintAfter,
  };
}

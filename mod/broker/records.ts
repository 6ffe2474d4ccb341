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

/** A Decision record. */
export function decisionEvent(
  call: CallIds & { arguments: string },
  outcome: RecordedOutcome,
  context: { grant: string | null; grantSha256: string | null; state: SessionState },
): AuditEvent {
  return {
    type: "decision",
    session: call.task,
    call: call.key,
    tool: call.tool,
    arguments: call.arguments,
    outcome,
    grant: context.grant,
    grant_sha256: context.grantSha256,
    taint: context.state.taint,
    untrusted: context.state.untrusted,
  };
}

/** An Approval record. */
export function approvalEvent(
  call: CallIds & { decision: number },
  answer: { answer: "approved" | "refused" | "expired"; by: string | null; reason: string | null },
  redecision: {
    outcome: RecordedOutcome;
    grant: string | null;
    grantSha256: string | null;
    state: SessionState;
  },
): AuditEvent {
  return {
    type: "approval",
    session: call.task,
    call: call.key,
    decision: call.decision,
    answer: answer.answer,
    by: answer.by,
    reason: answer.reason,
    outcome: redecision.outcome,
    grant: redecision.grant,
    grant_sha256: redecision.grantSha256,
    taint: redecision.state.taint,
    untrusted: redecision.state.untrusted,
  };
}

/** A Result record: the content's hash and size, never the content. */
export function resultEvent(
  call: CallIds & { decision: number },
  outcome: { status: "result" | "failed"; content: string; truncated: boolean },
  label: Label,
  taintAfter: DataClass,
): AuditEvent {
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
    taint_after: taintAfter,
  };
}

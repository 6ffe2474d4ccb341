/**
 * The model-facing text of each denial (docs/grants.md#what-a-denial-looks-like-to-the-task): a
 * plain tool result the model can explain.
 */
import type { AskWhy } from "./decide.ts";
import type { DenyReason } from "./types.ts";

const TEXTS: Record<DenyReason, string> = {
  no_grant: "Denied: no grant allows this call.",
  grant_expired: "Denied: the grant for this call has expired.",
  taint_too_high: "Denied: this session has seen data too sensitive for this call.",
  denied_by_grant: "Denied: a grant forbids this call.",
  approval_refused: "Denied: the owner refused this call.",
  approval_expired: "Denied: the approval request expired without an answer.",
  invalid_arguments: "Denied: the arguments are not valid for this tool.",
  grants_invalid: "Denied: the grant files have an error; the owner has been told.",
  audit_unavailable: "Denied: the audit log cannot be written; the owner has been told.",
  state_unreadable: "Denied: this session's broker state is damaged; the owner has been told.",
};

/** What a refused or expired spend over budget answers (docs/grants.md, "Budgets"). */
const NOT_APPROVED = "not approved";

/**
 * The text the model receives as the result of a call denied for `reason`. A call that asked the
 * owner for a spend over its budget (`askedFor: "budget"`) and was refused, or not answered in
 * time, answers `not approved` instead.
 */
export function denialText(reason: DenyReason, options: { askedFor?: AskWhy } = {}): string {
  const spend = options.askedFor === "budget" &&
    (reason === "approval_refused" || reason === "approval_expired");
  return spend ? NOT_APPROVED : TEXTS[reason];
}

/**
 * The model-facing text of every denial reason, exactly
 * (docs/grants.md#what-a-denial-looks-like-to-the-task).
 */
import { denialText, type DenyReason } from "../../mod/policy/mod.ts";
import { assertEquals } from "../assert.ts";

const TABLE: [DenyReason, string][] = [
  ["no_grant", "Denied: no grant allows this call."],
  ["grant_expired", "Denied: the grant for this call has expired."],
  ["taint_too_high", "Denied: this session has seen data too sensitive for this call."],
  ["denied_by_grant", "Denied: a grant forbids this call."],
  ["approval_refused", "Denied: the owner refused this call."],
  ["approval_expired", "Denied: the approval request expired without an answer."],
  ["invalid_arguments", "Denied: the arguments are not valid for this tool."],
  ["grants_invalid", "Denied: the grant files have an error; the owner has been told."],
  ["audit_unavailable", "Denied: the audit log cannot be written; the owner has been told."],
  ["state_unreadable", "Denied: this session's broker state is damaged; the owner has been told."],
];

for (const [reason, text] of TABLE) {
  Deno.test(`the ${reason} denial reaches the model as "${text}"`, () => {
    assertEquals(denialText(reason), text);
  });
}

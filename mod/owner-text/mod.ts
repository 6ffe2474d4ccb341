/**
 * What the owner reads, written once for the command line and the portal: text from a task or a
 * model escaped as data, and the two-line block of a pending approval.
 */
export { answerText, approvalBlock } from "./approvals_format.ts";
export { escapeArguments, escapeModelText } from "./escape.ts";

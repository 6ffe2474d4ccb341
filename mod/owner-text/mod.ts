/**
 * What the owner reads, written once for the command line and the portal: text from a task or a
 * model shown as data (shownText, shownLines), and the two-line block of a pending approval.
 */
export { answerText, approvalBlock, ARGUMENTS_MAX } from "./approvals_format.ts";
export { SHOWN_LINES_MAX, SHOWN_MAX, shownLines, type ShownOptions, shownText } from "./escape.ts";
export { blockedText, blockReasonText, journalWords } from "./journal_words.ts";
export { CONTINUED, terminalRows } from "./terminal_rows.ts";
export {
  centsText,
  dollarsText,
  spendNotes,
  spendTable,
  totalNanocents,
  unpricedText,
  usageWords,
} from "./spend_text.ts";
export { workdirEventWords, workdirText } from "./workdir_words.ts";

/** How `gurt approvals` shows a pending approval: two lines, escaped (docs/grants.md#approvals). */
import type { AdminResult, AnsweredAnswer, PendingApprovalView } from "../admin/mod.ts";
import { shownText } from "./escape.ts";
import { centsText } from "./spend_text.ts";

/**
 * The most characters of a call's arguments shown in the block: past them the block says how many
 * more there are, and the owner who has not read them all should refuse.
 */
export const ARGUMENTS_MAX = 4000;

/** The two-line block of one pending approval, as of `now`. */
export function approvalBlock(item: PendingApprovalView, now: Date): string {
  const age = ago(now.getTime() - Date.parse(item.created));
  const left = within(Date.parse(item.expires) - now.getTime());
  const parts = [
    String(item.approval),
    age,
    `expires ${left}`,
    `task ${shownText(item.task, { max: 100 })}`,
  ];
  if (item.grant !== null) parts.push(`grant ${shownText(item.grant, { max: 200 })}`);
  if (item.kind === "budget") parts.push("over budget");
  if (item.costCents !== null) parts.push(`cost ${centsText(item.costCents)}`);
  parts.push(`taint ${item.taint}`);
  const call = `${shownText(item.tool, { max: 200 })} ${
    shownText(item.arguments, { max: ARGUMENTS_MAX })
  }`;
  return `${parts.join("  ")}\n    ${call}`;
}

/** What the owner is told of the core's answer to an approve or refuse. */
export interface AnswerText {
  text: string;
  /** True when the approved call runs, or the refusal was recorded. */
  ok: boolean;
  /** True when the core refused the request itself (the text goes to stderr). */
  error: boolean;
}

/** The line for the core's answer to `approve` or `refuse` of approval `id`. */
export function answerText(
  answer: AdminResult<AnsweredAnswer>,
  asked: { id: number; action: "approve" | "refuse" },
): AnswerText {
  const { id, action } = asked;
  if (!answer.ok) {
    if (answer.code === "no_such_approval") {
      return {
        text:
          `${id}: no such approval (already answered or expired, or dropped when gurt serve stopped: approvals wait only while it runs)`,
        ok: false,
        error: false,
      };
    }
    // The core's own sentences about an approval begin with its id already.
    const error = shownText(answer.error);
    const text = error.startsWith(`${id}: `) ? error : `${id}: ${error}`;
    return { text, ok: false, error: true };
  }
  if (action === "refuse") return { text: `refused ${id}`, ok: true, error: false };
  const outcome = answer.value.outcome;
  if (outcome.outcome === "denied") {
    return {
      text: `approved ${id}: denied (${shownText(outcome.reason, { max: 200 })})`,
      ok: false,
      error: false,
    };
  }
  return { text: `approved ${id}: runs`, ok: true, error: false };
}

function ago(ms: number): string {
  if (ms < 5_000) return "just now";
  return `${span(ms)} ago`;
}

function within(ms: number): string {
  return ms <= 0 ? "now" : `in ${span(ms)}`;
}

function span(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h`;
}

/**
 * Droid's questions to its user as the owner's approvals. Droid 0.215.0 offers its model AskUser
 * only in its terminal and interactive modes, never in `droid exec` (its `isToolEnabled` asks for
 * the terminal-ui or interactive-cli mode; `--add-tools AskUser` does not change that), so a task's
 * Droid would otherwise ask its question as its final answer and end. `gurt mcp --ask-user-tool`
 * gives it `box_ask_user` in AskUser's place, with AskUser's own input (`{questionnaire}`, in its
 * format), and Droid's system prompt says to use it (mod/agents/droid.ts). The relay
 * (relay_main.ts) asks the owner through /ask with the question this file writes; the owner answers
 * yes (`gurt approve N`) or no (`gurt refuse N [--reason TEXT]`, the reason the owner's own words),
 * and the model is told which. Pure: no I/O, nothing loaded.
 */
import { shownText } from "./permission.ts";

/** The longest rendering of a questionnaire in the owner's question, in characters. */
const MAX_QUESTIONNAIRE_CHARS = 1_500;

/** The questionnaire in a call's arguments, or the sentence that says what is wrong with them. */
export function readQuestionnaire(args: Record<string, unknown>): string | { error: string } {
  const { questionnaire } = args;
  if (typeof questionnaire !== "string" || questionnaire.trim() === "") {
    return {
      error:
        "box_ask_user takes AskUser's input, {questionnaire}: questionnaire must be the questions, as text.",
    };
  }
  return questionnaire;
}

/**
 * The question the owner is asked: the questionnaire's lines (blank ones dropped, each trimmed)
 * joined with " / ", cut to a bound, every character that could hide text escaped.
 */
export function askUserQuestion(questionnaire: string): string {
  const lines = questionnaire.split(/\r?\n/).map((line) => line.trim()).filter((line) => line);
  return `Droid asks you (approve: yes, the first option of each question; refuse --reason: no, with your answer): ${
    shownText(lines.join(" / "), MAX_QUESTIONNAIRE_CHARS)
  }`;
}

/** What the model is told once the owner said yes. */
export const ANSWERED_YES =
  "The box owner answered yes: go ahead with the first option of each question, or with what you proposed.";

/** What the model is told once the owner said no: with their words, if they gave any. */
export function answeredNo(reason: string | null): string {
  return reason === null
    ? "The box owner answered no (refused, or did not answer in time). Do not go ahead with what you asked about; choose another way, or end the task saying why."
    : `The box owner answered no, and wrote: ${reason}`;
}

/** What the model is told while the owner has not answered: the approval, and to call again. */
export function waitingMessage(approval: number | null): string {
  const which = approval === null ? "" : ` (approval ${approval})`;
  return `Waiting for the box owner to answer${which}. Call this tool again with the same questionnaire to check.`;
}

/**
 * How `gurt task watch` prints a task's journal as it grows (docs/threat-model.md#the-owners-view):
 * the model's text under a label of the core's, each of its lines after the first marked `  | `,
 * everything else a task chose on one line with its newlines as `\n` (shownText), a denial as
 * `[denied <name>: <reason>]` with the runbook pointer of the box's own failures.
 */
import type { JournalLineView } from "../admin/mod.ts";
import { blockedText, centsText, shownLines, shownText } from "../owner-text/mod.ts";

/** The runbook pointer printed under a denial that describes the box, not the call. */
const POINTERS: Record<string, string> = {
  grants_invalid: "see runbook.md#grants-invalid",
  audit_unavailable: "see runbook.md#audit-unavailable",
  state_unreadable: "see runbook.md#broker-state-damaged",
};

/** The most characters of a tool result shown in the watch. */
const SHOWN = 300;

/** What begins each line of the model's text after its first: no line of the core's does. */
export const MARK = "  | ";

type Fields = Record<string, unknown>;

/**
 * The text printed for one journal line, or null for a line the watch does not print. The broker
 * checked each line when it wrote it; a field read here is still turned into text on its own.
 */
export function watchLine(line: JournalLineView): string | null {
  switch (line.type) {
    case "step":
      return stepText(String(line.text ?? ""), line.data);
    case "tool.call":
      return null;
    case "tool.result": {
      const shown = shownText(JSON.stringify(line.answer) ?? "null", { max: SHOWN });
      return `[result ${shownText(String(line.tool), { max: 200 })}: ${shown}]`;
    }
    case "tool.unrecorded":
      return `[the result above is void: its Result record (seq ${line.result}) was never written]`;
    case "ask":
      return `[question ${line.approval}: ${shownText(String(line.question))}]`;
    case "ask.answer":
      return `[answer: ${line.approved === true ? "yes" : "no"}]`;
    case "cost":
      return `[cost ${centsText(Number(line.cents))} ${
        shownText(String(line.what), { max: 200 })
      }]`;
    case "event":
      return eventText(String(line.event), fieldsOf(line.detail));
    default:
      return null;
  }
}

function fieldsOf(value: unknown): Fields | null {
  return typeof value === "object" && value !== null ? value as Fields : null;
}

/** The model's text under `label`: its first line after the label, each other after MARK. */
function labelled(label: string, text: string): string {
  const [first, ...rest] = shownLines(text);
  return [`${label} ${first}`, ...rest.map((line) => `${MARK}${line}`)].join("\n");
}

/** The items of `value` that are objects, or none when it is not an array. */
function objectsOf(value: unknown): Fields[] {
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is Fields => fieldsOf(item) !== null);
}

function stepText(text: string, data: unknown): string | null {
  // The task chose `data` whole: a loop transcript of any other shape is read as no transcript.
  const loop = fieldsOf(fieldsOf(data)?.loop);
  if (loop === null) return text === "" ? null : labelled("[step]", text);
  const out: string[] = [];
  if (text !== "") out.push(labelled("[model]", text));
  for (const message of objectsOf(loop.messages)) {
    if (message.role !== "assistant") continue;
    for (const call of objectsOf(message.calls)) {
      out.push(
        `→ ${shownText(String(call.name), { max: 200 })} ${
          shownText(JSON.stringify(call.input) ?? "undefined", { max: SHOWN })
        }`,
      );
    }
  }
  return out.length === 0 ? null : out.join("\n");
}

function eventText(event: string, detail: Fields | null): string | null {
  if (event === "tool_denied" && detail !== null) {
    const reason = String(detail.reason);
    const line = `[denied ${shownText(String(detail.name), { max: 200 })}: ${
      shownText(reason, { max: 200 })
    }]`;
    return Object.hasOwn(POINTERS, reason) ? `${line}\n${POINTERS[reason]}` : line;
  }
  if (event === "approval_pending") return null; // the block comes from the core, not the event
  if (event === "net.blocked" && detail !== null) return `[blocked ${blockedText(detail)}]`;
  return `[${shownText(event, { max: 200 })}]`;
}

/** The approval id an `approval_pending` or `ask` line names, or null for any other line. */
export function pendingId(line: JournalLineView): number | null {
  const approval = line.type === "ask"
    ? line.approval
    : line.type === "event" && line.event === "approval_pending"
    ? fieldsOf(line.detail)?.approval
    : null;
  return typeof approval === "number" && Number.isSafeInteger(approval) ? approval : null;
}

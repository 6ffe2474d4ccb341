/**
 * A task's journal line in words, as `gurt task show` prints it after the time and the portal's
 * task page shows it: one line, the core's words around the task's text, and every field the task
 * chose (a step, a key, a tool, an input, an answer, a question, a path) shown as data by
 * shownText, so no line a task wrote can read as a line of the core's.
 */
import type { JournalLineView } from "../admin/mod.ts";
import { shownText } from "./escape.ts";
import { centsText, usageWords } from "./spend_text.ts";
import { workdirEventWords } from "./workdir_words.ts";

type Detail = Record<string, unknown>;

function detailOf(value: unknown): Detail | null {
  return typeof value === "object" && value !== null ? value as Detail : null;
}

function text(value: unknown, max?: number): string {
  return shownText(String(value), { max });
}

/** A figure of cents from the journal in dollars; anything else (a damaged line) as data. */
function money(value: unknown): string {
  return typeof value === "number" && Number.isFinite(value) ? centsText(value) : `${json(value)}¢`;
}

function json(value: unknown): string {
  return shownText(JSON.stringify(value) ?? "undefined");
}

/** One journal line in words (without its time). */
export function journalWords(line: JournalLineView): string {
  // A key and a tool name came from the task: shown as data like its arguments.
  const key = text(line.key, 200);
  const tool = text(line.tool, 200);
  switch (line.type) {
    case "step":
      return `step ${text(line.text)}`;
    case "tool.call":
      return `call ${key} ${tool} ${json(line.input)} (decision ${line.decision})`;
    case "tool.result":
      return `result ${key} ${tool} ${json(line.answer)} cost ${money(line.cost)}`;
    case "tool.joined":
      return `joined ${key} ${tool}: answered as ${text(line.joined, 200)}, charged once`;
    case "tool.unrecorded":
      return `void ${key}: its Result record (seq ${line.result}) was never written`;
    case "ask":
      return `ask ${key} approval ${line.approval}: ${text(line.question)}`;
    case "ask.answer":
      return `answer ${key}: ${line.approved ? "approved" : "not approved"}`;
    case "cost":
      return `cost ${money(line.cents)} ${text(line.what, 200)}`;
    case "model.hold":
      return `hold ${text(line.hold, 40)}: ${text(line.service, 40)} ${text(line.path, 400)} (${
        text(line.model ?? "no model named", 200)
      }), at most ${money(line.cents)}`;
    case "model.usage":
      return usageWords(line);
    case "model.settled":
      return `hold ${text(line.hold, 40)} settled, no whole cent charged`;
    case "model.owed":
      return `hold ${text(line.hold, 40)}: ${
        money(line.cents)
      } the audit log could not take, charged at the next start`;
    case "event":
      return eventWords(String(line.event), detailOf(line.detail));
    default:
      return json(line);
  }
}

/** A notice of the core's: the ones it writes in words, any other as its JSON. */
function eventWords(event: string, detail: Detail | null): string {
  if (event === "approval_pending" && detail !== null) {
    return `approval ${text(detail.approval)} is waiting: ${text(detail.tool, 200)}, until ${
      text(detail.expires, 40)
    }`;
  }
  if (event === "tool_denied" && detail !== null) {
    return `denied ${text(detail.name, 200)}: ${text(detail.reason, 200)}`;
  }
  if (event === "unreadable") return "a journal line that is not JSON (damaged or cut short)";
  if (event === "net.blocked" && detail !== null) {
    return `blocked ${blockedText(detail, { words: true })}`;
  }
  const workdir = detail === null ? null : workdirEventWords(event, detail);
  if (workdir !== null) return workdir;
  return `event ${text(event, 200)} ${json(detail)}`;
}

/**
 * What a `net.blocked` event refused, in words: the egress proxy's `HOST:PORT (reason)`, or the
 * model endpoint's `SERVICE PATH (reason at WHERE)`, where WHERE names the body's field.
 */
export function blockedText(detail: Detail, options: { words?: boolean } = {}): string {
  const reason = options.words === true ? blockReasonText(detail.reason) : text(detail.reason, 200);
  if (typeof detail.service === "string" && typeof detail.path === "string") {
    const at = typeof detail.at === "string" && detail.at !== ""
      ? ` at ${text(detail.at, 200)}`
      : "";
    return `${text(detail.service, 40)} ${text(detail.path, 400)} (${reason}${at})`;
  }
  return `${text(detail.host, 300)}:${text(detail.port, 10)} (${reason})`;
}

/** The egress proxy's and the model endpoint's refusal reasons, in words (BlockReason). */
const BLOCK_REASONS: Record<string, string> = {
  not_listed: "not on the task's list",
  private_address: "a private address, not allowed for this host",
  own_address: "one of the box's own addresses",
  ip_literal: "an IP address, where a host name is needed",
  host_mismatch: "the request names another host than its CONNECT",
  sni_mismatch: "the TLS server name is not the host connected to",
  no_sni: "no TLS server name was sent",
  not_tls: "not TLS",
  resolve_failed: "the host name did not resolve",
  bad_request: "a malformed request",
};

/** Why a connection was refused, in words; a reason of no known kind as its code, as data. */
export function blockReasonText(reason: unknown): string {
  const known = typeof reason === "string" && Object.hasOwn(BLOCK_REASONS, reason);
  return known ? BLOCK_REASONS[reason as string] : text(reason, 200);
}

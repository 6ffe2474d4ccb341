/** The vocabulary of the decision path (docs/grants.md): classes, modes, reasons, requests. */

/** How sensitive a piece of data is, lowest first. */
export type DataClass = "public" | "private" | "secret";

/** What a grant does with a call it covers. */
export type Mode = "auto" | "ask" | "deny";

/** Why a call was denied; denial_text.ts gives the model-facing text of each. */
export type DenyReason =
  | "no_grant"
  | "grant_expired"
  | "taint_too_high"
  | "denied_by_grant"
  | "invalid_arguments"
  | "grants_invalid"
  | "audit_unavailable"
  | "state_unreadable"
  | "approval_refused"
  | "approval_expired";

/** The four tools built into gurt, which the runtime runs with the matched grant path. */
export const BUILTIN_TOOLS = ["read_file", "write_file", "shell", "http_fetch"] as const;

/**
 * The grant tool of a task's workdir (`gurt task start --workdir`, mod/workdir): no call of a task
 * names it; its grants decide which of the owner's folders a task may be given, at its start.
 */
export const WORKDIR_TOOL = "task.workdir";

/**
 * The grant tool of a task's own HTTPS requests that carry one of the owner's credentials (issue
 * 32, docs/grants.md#httprequest): each such request is a call with `{method, host, path}`.
 */
export const HTTP_REQUEST_TOOL = "http.request";

/** Whether `name` is a tool gurt itself defines for grants: a built-in, task.workdir, http.request. */
export function isGurtGrantTool(name: string): boolean {
  return isBuiltinTool(name) || name === WORKDIR_TOOL || name === HTTP_REQUEST_TOOL;
}

/** One of the four built-in tools. */
export type BuiltinTool = typeof BUILTIN_TOOLS[number];

/** Every data class, lowest first. */
export const DATA_CLASSES: readonly DataClass[] = ["public", "private", "secret"];

/** A task's taint and untrusted flag (a session is a task). */
export type SessionState = { taint: DataClass; untrusted: boolean };

/** The label a result carries: its class and whether it came from an untrusted source. */
export type Label = { resultClass: DataClass; untrusted: boolean };

/** A tool call as the core received it: the tool's name and its parsed JSON input. */
export type ToolRequest = { tool: string; arguments: unknown };

/** A denial: its reason, and for `denied_by_grant` the deny grant and its file's hash. */
export type Denial = {
  reason: DenyReason;
  grant: string | null;
  grant_sha256: string | null;
};

/** The rank of a data class: public 0, private 1, secret 2. */
export function classRank(value: DataClass): number {
  return DATA_CLASSES.indexOf(value);
}

/** The higher of two data classes. */
export function higherClass(a: DataClass, b: DataClass): DataClass {
  return classRank(a) >= classRank(b) ? a : b;
}

/** Whether `name` is one of the four built-in tools. */
export function isBuiltinTool(name: string): name is BuiltinTool {
  return (BUILTIN_TOOLS as readonly string[]).includes(name);
}

/**
 * The session state store (docs/grants.md#taint): each task's taint and untrusted flag in
 * `<home>/broker/sessions/<task>.json`. Absent means private and trusted; the taint only rises;
 * every write is atomic (mod/common's writeFileAtomic). The caller (the core's ledger) serialises
 * reads and writes for one task.
 */
import { writeFileAtomic } from "../common/mod.ts";
import { higherClass, type Label, type SessionState } from "./types.ts";

/** A state file that exists but cannot be used: every call of its task is denied. */
export class StateUnreadableError extends Error {
  constructor(readonly file: string, readonly why: string) {
    super(
      `the broker state file ${file} ${why}; every call of this task is denied with ` +
        "state_unreadable until it is repaired; see runbook.md#broker-state-damaged",
    );
    this.name = "StateUnreadableError";
  }
}

const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The state of a task that has never had a result: private and trusted. */
export const INITIAL_STATE: SessionState = Object.freeze({ taint: "private", untrusted: false });

/** The path of a task's state file. Throws if the task id could escape the sessions directory. */
export function sessionStatePath(home: string, task: string): string {
  if (!TASK_ID.test(task)) {
    throw new Error(
      `the task id ${JSON.stringify(task)} cannot name a state file: it must be 1 to 128 ` +
        "characters of A-Z, a-z, 0-9, ., _ and -, starting with a letter or digit",
    );
  }
  return `${home}/broker/sessions/${task}.json`;
}

/** The state after a result with `label`: the higher taint, and untrusted if either is. */
export function raisedState(state: SessionState, label: Label): SessionState {
  return {
    taint: higherClass(state.taint, label.resultClass),
    untrusted: state.untrusted || label.untrusted,
  };
}

/** Parses a state file's text, or says why it cannot be used. */
export function parseSessionState(text: string): SessionState | { problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { problem: "is not valid JSON" };
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { problem: "is not a JSON object" };
  }
  const keys = Object.keys(raw).sort().join(",");
  if (keys !== "taint,untrusted") {
    return { problem: 'must hold exactly the fields "taint" and "untrusted"' };
  }
  const { taint, untrusted } = raw as Record<string, unknown>;
  if (taint === "public") {
    return { problem: 'says "public", which gurt never writes (a task is never below private)' };
  }
  if (taint !== "private" && taint !== "secret") {
    return { problem: 'has a taint that is not "private" or "secret"' };
  }
  if (typeof untrusted !== "boolean") {
    return { problem: "has an untrusted flag that is not true or false" };
  }
  return { taint, untrusted };
}

/** Reads a task's state: private and trusted if there is no file; throws StateUnreadableError if damaged. */
// deno-lint-ignore require-await
export async function readSessionState(home: string, task: string): Promise<SessionState> {
  const file = sessionStatePath(home, task);
  let text: string;
  try {
    // A synchronous read: the file is a few dozen bytes in the page cache, read in microseconds,
    // where an async read costs a trip through Deno's blocking pool on every call's path.
    text = Deno.readTextFileSync(file);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { ...INITIAL_STATE };
    throw new StateUnreadableError(file, `cannot be read (${describe(error)})`);
  }
  const parsed = parseSessionState(text);
  if ("problem" in parsed) throw new StateUnreadableError(file, parsed.problem);
  return parsed;
}

/**
 * Raises `task`'s state by a result's `label` (never lowers it) and writes it atomically: creates
 * the file at a task's first result. Returns the state written.
 */
export async function raiseSessionState(
  home: string,
  raise: { task: string; label: Label },
): Promise<SessionState> {
  const { task, label } = raise;
  const file = sessionStatePath(home, task);
  const next = raisedState(await readSessionState(home, task), label);
  const dir = `${home}/broker/sessions`;
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(file, JSON.stringify(next));
  return next;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

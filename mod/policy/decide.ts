/**
 * decide and redecide (docs/grants.md#how-a-call-is-decided), and the only place a Decision or an
 * Ask is built. Both classes have private constructors and are minted through a symbol this file
 * does not export, so code elsewhere cannot make one (tests/policy/brand_types.ts proves it).
 * Pure: no I/O, no clock.
 */
import {
  type ArgsParse,
  parseBuiltinArguments,
  parseHttpRequestArguments,
  serialiseArguments,
  type ToolArgs,
} from "./arguments.ts";
import type { GrantLoad, GrantSet } from "./grant_set.ts";
import { type Candidate, matchGrants, type Winner } from "./matching.ts";
import {
  type BuiltinTool,
  type Denial,
  type DenyReason,
  HTTP_REQUEST_TOOL,
  isBuiltinTool,
  type Label,
  type SessionState,
  type ToolRequest,
} from "./types.ts";

const mint: unique symbol = Symbol("gurt policy mint");

/** What a Decision and an Ask both carry: the call and the grant that matched it. */
type CallFields = {
  tool: string;
  args: ToolArgs;
  grant: string;
  grantSha256: string;
  matchedPath: string | null;
  grantPaths: readonly string[];
  hosts: readonly string[];
  label: Label;
  expires: Date | null;
};

/**
 * What a Decision and an Ask both show of the call and the grant that matched it. Not exported from
 * mod/policy, so nothing outside can extend it; its subclasses' constructors are private.
 */
abstract class MatchedCall {
  readonly #call: CallFields;

  protected constructor(call: CallFields) {
    this.#call = call;
  }

  /** The tool. */
  get tool(): string {
    return this.#call.tool;
  }
  /** The parsed arguments, typed by tool. */
  get args(): ToolArgs {
    return this.#call.args;
  }
  /** The id of the grant that matched (for a Decision, the winner). */
  get grant(): string {
    return this.#call.grant;
  }
  /** The sha256 hex of that grant's file. */
  get grantSha256(): string {
    return this.#call.grantSha256;
  }
  /**
   * The grant's path that covers the call (for http.request, the path pattern), or null
   * (http_fetch, shell without cwd, http.request under a grant without paths).
   */
  get matchedPath(): string | null {
    return this.#call.matchedPath;
  }
  /** Every path of the grant. */
  get grantPaths(): readonly string[] {
    return this.#call.grantPaths;
  }
  /** The grant's host patterns. */
  get hosts(): readonly string[] {
    return this.#call.hosts;
  }
  /** The result's label, combined over every grant left after matching. */
  get label(): Label {
    return { ...this.#call.label };
  }
  /** When the grant expires (an approval must not outlive it), or null. */
  get expires(): Date | null {
    return this.#call.expires;
  }
}

/** A call that may run now: allowed by an auto grant, or approved and decided again. */
export class Decision extends MatchedCall {
  // Without a private field of its own, an Ask would be assignable to a Decision (same shape).
  readonly #isDecision = true;

  private constructor(call: CallFields) {
    super(call);
  }

  /** Builds a Decision; the key is not exported, so only this file can call it. */
  static [mint](call: CallFields): Decision {
    return new Decision(call);
  }
}

/** Why a call asks the owner: its grant says ask, or it would take the task over its budget. */
export type AskWhy = "grant" | "budget";

/** A call waiting for the owner. Only redecide turns it into a Decision. */
export class Ask extends MatchedCall {
  readonly #why: AskWhy;

  private constructor(call: CallFields, why: AskWhy) {
    super(call);
    this.#why = why;
  }

  /** Builds an Ask; the key is not exported, so only this file can call it. */
  static [mint](call: CallFields, why: AskWhy): Ask {
    return new Ask(call, why);
  }

  /** Why the owner is asked. */
  get why(): AskWhy {
    return this.#why;
  }
}

/** What decide says: run it, ask the owner, or deny it with a reason. */
export type Outcome =
  | { kind: "allowed"; decision: Decision }
  | { kind: "ask"; ask: Ask }
  | { kind: "denied"; denial: Denial };

/** What redecide says: run it, or deny it. */
export type Redecision = { kind: "allowed"; decision: Decision } | {
  kind: "denied";
  denial: Denial;
};

/** What decide needs besides the call: the grants, the session's state, the time, the budget. */
export type DecideOptions = {
  grants: GrantSet;
  state: SessionState;
  now: Date;
  overBudget?: boolean;
};

/** decide's outcome with every candidate grant and what matching made of it, for `explain`. */
export type Explanation = {
  outcome: Outcome;
  candidates: Candidate[];
  argumentsProblem: string | null;
};

/** Decides one call (docs/grants.md#matching): allowed, ask, or denied with a reason. */
export function decide(request: ToolRequest, options: DecideOptions): Outcome {
  return explainDecision(request, options).outcome;
}

/** Decides as `decide` does and also reports each candidate grant and why it dropped out. */
export function explainDecision(request: ToolRequest, options: DecideOptions): Explanation {
  const tool = request.tool;
  let args: ToolArgs;
  if (isBuiltinTool(tool) || tool === HTTP_REQUEST_TOOL) {
    const parsed: ArgsParse = tool === HTTP_REQUEST_TOOL
      ? parseHttpRequestArguments(request.arguments)
      : parseBuiltinArguments(tool as BuiltinTool, request.arguments);
    if (!parsed.ok) {
      const outcome = denied("invalid_arguments", null);
      return { outcome, candidates: [], argumentsProblem: parsed.problem };
    }
    args = parsed.args;
  } else {
    // An app tool: the core validated its input against the tool's schema; it is opaque here.
    // A frozen copy, so that what was decided is what runs.
    args = { kind: "app", input: frozenCopy(request.arguments) };
  }
  const match = matchGrants({ tool, args }, options);
  if (match.result.kind === "none") {
    return {
      outcome: denied(match.result.reason, null),
      candidates: match.candidates,
      argumentsProblem: null,
    };
  }
  const winner = match.result.winner;
  const call = callFields(tool, args, winner);
  let outcome: Outcome;
  if (winner.grant.mode === "deny") {
    outcome = denied("denied_by_grant", winner);
  } else if (winner.grant.mode === "ask") {
    outcome = { kind: "ask", ask: Ask[mint](call, "grant") };
  } else if (options.overBudget === true) {
    outcome = { kind: "ask", ask: Ask[mint](call, "budget") };
  } else {
    outcome = { kind: "allowed", decision: Decision[mint](call) };
  }
  return { outcome, candidates: match.candidates, argumentsProblem: null };
}

/** What decideLoaded needs besides the call: the load of the grants, and what was found of the call. */
export type LoadedOptions = Omit<DecideOptions, "grants" | "state"> & {
  /** The load of the grant files: a valid set, or its problems. */
  load: GrantLoad;
  /** The session's state, or null where it could not be read. */
  state: SessionState | null;
  /** Whether the tool is one the session was given at all (a task's tools); true if omitted. */
  offered?: boolean;
  /** Whether an app tool's input parsed against its schema; true if omitted. */
  inputValid?: boolean;
};

/**
 * Decides a call against a load of the grant files, in the order of docs/grants.md ("How a call is
 * decided"): an invalid set denies every call with grants_invalid, then a state that could not be
 * read denies with state_unreadable, a tool the session was not given with no_grant, and an app
 * tool's input its schema refused with invalid_arguments; the rest is decided by `decide`.
 */
export function decideLoaded(request: ToolRequest, options: LoadedOptions): Outcome {
  const { load, state, offered = true, inputValid = true, ...rest } = options;
  if (!load.ok) return denied("grants_invalid", null);
  if (state === null) return denied("state_unreadable", null);
  if (!offered) return denied("no_grant", null);
  if (!inputValid) return denied("invalid_arguments", null);
  return decide(request, { ...rest, grants: load.grants, state });
}

/**
 * Decides an approved Ask again with the grants and state as they are now: ask and auto both give
 * a Decision under the grant matched now; a deny grant or no grant left gives the Denial.
 */
export function redecide(
  ask: Ask,
  options: { grants: GrantSet; state: SessionState; now: Date },
): Redecision {
  const match = matchGrants({ tool: ask.tool, args: ask.args }, options);
  if (match.result.kind === "none") return denied(match.result.reason, null);
  const winner = match.result.winner;
  if (winner.grant.mode === "deny") return denied("denied_by_grant", winner);
  return { kind: "allowed", decision: Decision[mint](callFields(ask.tool, ask.args, winner)) };
}

/**
 * The parsed arguments of an Ask or a Decision serialised again (docs/grants.md#approvals): the
 * form serialiseArguments gives. What the owner approves.
 */
export function canonicalArguments(call: Ask | Decision): string {
  return serialiseArguments(call.args);
}

function callFields(tool: string, args: ToolArgs, winner: Winner): CallFields {
  return {
    tool,
    args: Object.isFrozen(args) ? args : Object.freeze({ ...args }),
    grant: winner.grant.id,
    grantSha256: winner.grant.sha256,
    matchedPath: winner.matchedPath,
    grantPaths: winner.grant.paths,
    hosts: winner.grant.hosts,
    label: winner.label,
    expires: winner.grant.expires,
  };
}

function denied(reason: DenyReason, winner: Winner | null): { kind: "denied"; denial: Denial } {
  return {
    kind: "denied",
    denial: {
      reason,
      grant: winner === null ? null : winner.grant.id,
      grant_sha256: winner === null ? null : winner.grant.sha256,
    },
  };
}

/** A deep-frozen copy, equal to what structuredClone makes of `value`. */
function frozenCopy(value: unknown): unknown {
  const plain = plainFrozenCopy(value, new Set(), 0);
  return plain !== NOT_PLAIN ? plain : deepFreeze(structuredClone(value));
}

/** What plainFrozenCopy gives for a value it leaves to structuredClone. */
const NOT_PLAIN = Symbol("not plain");

/**
 * A frozen copy of a value made only of JSON's kinds (plain objects and arrays, strings, numbers,
 * booleans, null), such as a parsed input, copied as structuredClone copies them but without its
 * serialiser (several microseconds on each call's path). Anything else (another prototype, a hole
 * or an extra key in an array, a `__proto__` key, an object met twice, a function) is NOT_PLAIN,
 * for structuredClone to copy (or refuse) as before.
 */
function plainFrozenCopy(value: unknown, seen: Set<object>, depth: number): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
    case "undefined":
    case "bigint":
      return value;
    case "object":
      break;
    default:
      return NOT_PLAIN;
  }
  const object = value as object;
  if (seen.has(object) || depth > PLAIN_DEPTH) return NOT_PLAIN;
  seen.add(object);
  const keys = Object.keys(object);
  if (Array.isArray(object)) {
    if (Object.getPrototypeOf(object) !== Array.prototype || keys.length !== object.length) {
      return NOT_PLAIN;
    }
    const out: unknown[] = [];
    for (let i = 0; i < object.length; i++) {
      if (!Object.hasOwn(object, i)) return NOT_PLAIN;
      const item = plainFrozenCopy(object[i], seen, depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out.push(item);
    }
    return Object.freeze(out);
  }
  const proto = Object.getPrototypeOf(object);
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (key === "__proto__") return NOT_PLAIN;
    const item = plainFrozenCopy((object as Record<string, unknown>)[key], seen, depth + 1);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    out[key] = item;
  }
  return Object.freeze(out);
}

/** Deeper than this, plainFrozenCopy leaves the value to structuredClone. */
const PLAIN_DEPTH = 256;

function deepFreeze(value: unknown): unknown {
  if (typeof value === "object" && value !== null) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

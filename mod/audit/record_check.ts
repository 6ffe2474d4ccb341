/**
 * A hand-written check of the audit record's shape, for the lines the verifier's compact scanner
 * does not read and for the startup check's ChainVerifier: zod takes about 1.7 µs a record, this
 * about 0.6 µs (a fifth of the startup check's time). The zod schema in records.ts stays the
 * definition; EVENT_FIELDS is the same as a table, which the compact scanner reads too. This check
 * accepts a value only if the schema accepts it and its keys are in the schema's order (as the
 * writer writes them), so the value is exactly what the schema would return; anything else goes to
 * the schema, which accepts it or says what is wrong. tests/audit/record_check_test.ts proves the
 * agreement with fast-check. It imports only json_bytes.ts, which imports nothing, so that
 * records.ts and the verifier's machine can use it.
 */
import { isIsoTime } from "./json_bytes.ts";

/** The prev of the first record ever written (here, so that the verifier's machine needs no zod). */
export const ZERO_HASH = "0".repeat(64);

/** The data classes of records.ts's TAINTS. */
export const TAINTS = ["public", "private", "secret"];
/** A denied decision's reason: snake_case. */
export const REASON = /^[a-z][a-z_]*$/;
/** An approval's answers. */
export const ANSWERS = ["approved", "refused", "expired"];
/** A result's statuses. */
export const STATUSES = ["result", "failed"];

/** Whether the value is a record the schema accepts, with every object's keys in schema order. */
export function isCanonicalRecord(value: unknown): boolean {
  if (!hasKeys(value, RECORD_KEYS)) return false;
  return isCount(value.seq) && isTime(value.time) && isHash(value.prev) && isEvent(value.event);
}

/** A JSON object's fields. */
export type Fields = Record<string, unknown>;

const RECORD_KEYS = ["seq", "time", "prev", "event"];

/** What records.ts's schema requires of a field's value. */
export type Kind =
  /** A string of at least one character. */
  | "text"
  | "string"
  | "textOrNull"
  | "stringOrNull"
  /** 64 lowercase hex digits (a SHA-256). */
  | "hash"
  | "hashOrNull"
  /** A whole number from 0 that JavaScript holds exactly (a seq, a count of bytes or cents). */
  | "count"
  | "countOrNull"
  /** A count from 1: a line number. */
  | "line"
  | "bool"
  /** One of TAINTS, ANSWERS, STATUSES. */
  | "taint"
  | "answer"
  | "status"
  /** A decision's outcome: allowed, ask, or denied with a REASON. */
  | "outcome"
  /** An array of texts. */
  | "texts";

/** A field of an event: its key and kind. */
export interface Field {
  key: string;
  kind: Kind;
}

/**
 * Each event type's fields after `type`, in schema order: records.ts's event schemas as a table,
 * which this check and the compact scanner read (tests/audit/record_check_test.ts proves the two
 * agree with the schemas).
 */
export const EVENT_FIELDS: Record<string, readonly Field[]> = {
  decision: fields(
    ["session", "text"],
    ["call", "text"],
    ["tool", "text"],
    ["arguments", "string"],
    ["outcome", "outcome"],
    ["grant", "textOrNull"],
    ["grant_sha256", "hashOrNull"],
    ["taint", "taint"],
    ["untrusted", "bool"],
  ),
  approval: fields(
    ["session", "text"],
    ["call", "text"],
    ["decision", "count"],
    ["answer", "answer"],
    ["by", "textOrNull"],
    ["reason", "stringOrNull"],
    ["outcome", "outcome"],
    ["grant", "textOrNull"],
    ["grant_sha256", "hashOrNull"],
    ["taint", "taint"],
    ["untrusted", "bool"],
  ),
  result: fields(
    ["session", "text"],
    ["call", "text"],
    ["decision", "count"],
    ["status", "status"],
    ["class", "taint"],
    ["untrusted", "bool"],
    ["truncated", "bool"],
    ["bytes", "count"],
    ["sha256", "hash"],
    ["taint_after", "taint"],
  ),
  recovery: fields(["torn_bytes", "count"], ["torn_sha256", "hash"]),
  accepted_break: fields(["file", "text"], ["line", "line"], ["last_good", "hash"]),
  task_started: fields(
    ["task", "text"],
    ["worker", "text"],
    ["tools", "texts"],
    ["budget_cents", "countOrNull"],
  ),
  task_ended: fields(["task", "text"], ["state", "text"], ["reason", "stringOrNull"]),
  vault_set: fields(["name", "text"]),
  vault_removed: fields(["name", "text"]),
  vault_denied: fields(["app", "text"], ["name", "text"]),
  vault_allowed: fields(["app", "text"], ["name", "text"]),
  cost: fields(["task", "text"], ["cents", "count"], ["what", "text"]),
  net_blocked: fields(["task", "text"], ["host", "text"], ["port", "count"], ["reason", "text"]),
  app_blocked: fields(["app", "text"], ["host", "text"], ["port", "count"], ["reason", "text"]),
  app_added: fields(["app", "text"], ["kind", "text"], ["manifest_sha256", "hash"]),
  app_removed: fields(["app", "text"], ["manifest_sha256", "hash"]),
  app_disabled: fields(["app", "text"]),
  app_enabled: fields(["app", "text"]),
};

function fields(...pairs: [string, Kind][]): Field[] {
  return pairs.map(([key, kind]) => ({ key, kind }));
}

/** The keys of each event type, in schema order: `type`, then its EVENT_FIELDS. */
const EVENT_KEYS: Record<string, string[]> = {};
for (const [type, list] of Object.entries(EVENT_FIELDS)) {
  EVENT_KEYS[type] = ["type", ...list.map((field) => field.key)];
}

function isEvent(value: unknown): boolean {
  if (
    !isObject(value) || typeof value.type !== "string" || !Object.hasOwn(EVENT_FIELDS, value.type)
  ) {
    return false;
  }
  if (!hasKeys(value, EVENT_KEYS[value.type])) return false;
  const fields = EVENT_FIELDS[value.type];
  for (let i = 0; i < fields.length; i++) {
    if (!isOfKind(value[fields[i].key], fields[i].kind)) return false;
  }
  return true;
}

/** Whether the value is what the schema requires of a field of this kind. */
function isOfKind(value: unknown, kind: Kind): boolean {
  switch (kind) {
    case "text":
      return isText(value);
    case "string":
      return typeof value === "string";
    case "textOrNull":
      return value === null || isText(value);
    case "stringOrNull":
      return value === null || typeof value === "string";
    case "hash":
      return isHash(value);
    case "hashOrNull":
      return value === null || isHash(value);
    case "count":
      return isCount(value);
    case "countOrNull":
      return value === null || isCount(value);
    case "line":
      return isCount(value) && (value as number) > 0;
    case "bool":
      return typeof value === "boolean";
    case "taint":
      return isOneOf(value, TAINTS);
    case "answer":
      return isOneOf(value, ANSWERS);
    case "status":
      return isOneOf(value, STATUSES);
    case "outcome":
      return isOutcome(value);
    case "texts":
      return Array.isArray(value) && value.every(isText);
  }
}

function isOutcome(value: unknown): boolean {
  if (!isObject(value)) return false;
  if (value.outcome === "allowed" || value.outcome === "ask") return hasKeys(value, ["outcome"]);
  if (value.outcome !== "denied" || !hasKeys(value, ["outcome", "reason"])) return false;
  return typeof value.reason === "string" && REASON.test(value.reason);
}

function isObject(value: unknown): value is Fields {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An object whose own keys are exactly these, in this order. */
function hasKeys(value: unknown, keys: string[]): value is Fields {
  if (!isObject(value)) return false;
  // for-in allocates no array, as Object.keys does; it also lists enumerable inherited keys, which
  // a parsed JSON object has none of, and which only make this check refuse.
  let i = 0;
  for (const key in value) {
    if (i >= keys.length || key !== keys[i]) return false;
    i++;
  }
  return i === keys.length;
}

/** A whole number from 0 that JavaScript holds exactly (a seq, a count of bytes or cents). */
function isCount(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function isText(value: unknown): boolean {
  return typeof value === "string" && value.length > 0;
}

/** 64 lowercase hex digits, as records.ts's hash32; a loop, which is 4 times as fast as its regex. */
function isHash(value: unknown): boolean {
  if (typeof value !== "string" || value.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const code = value.charCodeAt(i);
    if (!((code >= 48 && code <= 57) || (code >= 97 && code <= 102))) return false;
  }
  return true;
}

function isTime(value: unknown): boolean {
  return typeof value === "string" && isIsoTime(value);
}

function isOneOf(value: unknown, allowed: readonly string[]): boolean {
  return typeof value === "string" && allowed.includes(value);
}

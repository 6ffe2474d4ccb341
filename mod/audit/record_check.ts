/**
 * A hand-written check of the audit record's shape, for the verifier's hot path: zod takes about
 * 1.7 µs a record, this about 0.6 µs (most of it Date.parse and the hash digits). The zod schema
 * in records.ts stays the definition. This check accepts a value only if the schema accepts it
 * and its keys are in the schema's order (as the writer writes them), so the value is exactly
 * what the schema would return; anything else goes to the schema, which accepts it or says what
 * is wrong. tests/audit/record_check_test.ts proves the agreement with fast-check.
 */
/** The prev of the first record ever written (here, so that the verifier's machine needs no zod). */
export const ZERO_HASH = "0".repeat(64);

/** The data classes of records.ts's TAINTS (this file imports nothing, so records.ts can use it). */
export const TAINTS = ["public", "private", "secret"];
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A denied decision's reason: snake_case. */
export const REASON = /^[a-z][a-z_]*$/;
/** An approval's answers. */
export const ANSWERS = ["approved", "refused", "expired"];
/** A result's statuses. */
export const STATUSES = ["result", "failed"];

/** Whether the value is a record the schema accepts, with every object's keys in schema order. */
export function isCanonicalRecord(value: unknown): boolean {
  if (!hasKeys(value, RECORD_KEYS)) return false;
  return isSeq(value.seq) && isTime(value.time) && isHash(value.prev) && isEvent(value.event);
}

/** A JSON object's fields. */
export type Fields = Record<string, unknown>;

const RECORD_KEYS = ["seq", "time", "prev", "event"];

/** The keys of each event type, in schema order. */
export const EVENT_KEYS: Record<string, string[]> = {
  decision: [
    "type",
    "session",
    "call",
    "tool",
    "arguments",
    "outcome",
    "grant",
    "grant_sha256",
    "taint",
    "untrusted",
  ],
  approval: [
    "type",
    "session",
    "call",
    "decision",
    "answer",
    "by",
    "reason",
    "outcome",
    "grant",
    "grant_sha256",
    "taint",
    "untrusted",
  ],
  result: [
    "type",
    "session",
    "call",
    "decision",
    "status",
    "class",
    "untrusted",
    "truncated",
    "bytes",
    "sha256",
    "taint_after",
  ],
  recovery: ["type", "torn_bytes", "torn_sha256"],
  accepted_break: ["type", "file", "line", "last_good"],
  task_started: ["type", "task", "worker", "tools", "budget_cents"],
  task_ended: ["type", "task", "state", "reason"],
  vault_set: ["type", "name"],
  vault_removed: ["type", "name"],
  vault_denied: ["type", "app", "name"],
  vault_allowed: ["type", "app", "name"],
  cost: ["type", "task", "cents", "what"],
};

/**
 * For the writer's hot path: a copy of an event the schema accepts whose keys are in schema order,
 * which is what the schema would return for it; null for anything else (the writer gives that to
 * the schema, which accepts it or says what is wrong). Only plain objects and arrays are copied:
 * another prototype could hold keys or a toJSON the schema's plain copy would not.
 */
export function canonicalEventCopy(value: unknown): Fields | null {
  if (!isPlainObject(value) || !isEvent(value)) return null;
  const out: Fields = {};
  for (const key of EVENT_KEYS[value.type as string]) out[key] = value[key];
  if (out.outcome !== undefined) {
    if (!isPlainObject(out.outcome)) return null;
    out.outcome = { ...out.outcome };
  }
  if (out.tools !== undefined) {
    if (Object.getPrototypeOf(out.tools) !== Array.prototype) return null;
    out.tools = [...(out.tools as string[])];
  }
  return out;
}

function isPlainObject(value: unknown): value is Fields {
  return isObject(value) && Object.getPrototypeOf(value) === Object.prototype;
}

function isEvent(value: unknown): boolean {
  if (
    !isObject(value) || typeof value.type !== "string" || !Object.hasOwn(EVENT_KEYS, value.type)
  ) {
    return false;
  }
  if (!hasKeys(value, EVENT_KEYS[value.type])) return false;
  const e = value;
  switch (e.type) {
    case "decision":
      return isText(e.session) && isText(e.call) && isText(e.tool) &&
        typeof e.arguments === "string" && isOutcome(e.outcome) && isTextOrNull(e.grant) &&
        isHashOrNull(e.grant_sha256) && isTaint(e.taint) && typeof e.untrusted === "boolean";
    case "approval":
      return isText(e.session) && isText(e.call) && isSeq(e.decision) &&
        isOneOf(e.answer, ANSWERS) && isTextOrNull(e.by) &&
        (e.reason === null || typeof e.reason === "string") && isOutcome(e.outcome) &&
        isTextOrNull(e.grant) && isHashOrNull(e.grant_sha256) && isTaint(e.taint) &&
        typeof e.untrusted === "boolean";
    case "result":
      return isText(e.session) && isText(e.call) && isSeq(e.decision) &&
        isOneOf(e.status, STATUSES) && isTaint(e.class) && typeof e.untrusted === "boolean" &&
        typeof e.truncated === "boolean" && isSeq(e.bytes) && isHash(e.sha256) &&
        isTaint(e.taint_after);
    case "recovery":
      return isSeq(e.torn_bytes) && isHash(e.torn_sha256);
    case "accepted_break":
      return isText(e.file) && isSeq(e.line) && (e.line as number) > 0 && isHash(e.last_good);
    case "task_started":
      return isText(e.task) && isText(e.worker) && Array.isArray(e.tools) &&
        e.tools.every(isText) && (e.budget_cents === null || isSeq(e.budget_cents));
    case "task_ended":
      return isText(e.task) && isText(e.state) &&
        (e.reason === null || typeof e.reason === "string");
    case "vault_set":
    case "vault_removed":
      return isText(e.name);
    case "vault_denied":
    case "vault_allowed":
      return isText(e.app) && isText(e.name);
    case "cost":
      return isText(e.task) && isSeq(e.cents) && isText(e.what);
    default:
      return false;
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
function isSeq(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function isText(value: unknown): boolean {
  return typeof value === "string" && value.length > 0;
}

function isTextOrNull(value: unknown): boolean {
  return value === null || isText(value);
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

function isHashOrNull(value: unknown): boolean {
  return value === null || isHash(value);
}

function isTime(value: unknown): boolean {
  return typeof value === "string" && ISO_TIME.test(value) && !Number.isNaN(Date.parse(value));
}

function isTaint(value: unknown): boolean {
  return isOneOf(value, TAINTS);
}

function isOneOf(value: unknown, allowed: readonly string[]): boolean {
  return typeof value === "string" && allowed.includes(value);
}

/**
 * The audit record and its events (docs/audit.md#a-record, owner acts included), as strict zod
 * schemas: unknown fields are rejected in the record, in the event and in the outcome.
 */
import { z } from "zod";
import { isCanonicalRecord } from "./record_check.ts";

/** 64 lowercase hex digits: a SHA-256. */
export const hash32 = z.string().regex(/^[0-9a-f]{64}$/, { message: "must be 64 lowercase hex" });

/** A sequence number: a whole number from 0 that JavaScript holds exactly. */
const seqNumber = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** A count of bytes or cents. */
const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** ISO 8601 UTC with milliseconds, as Date.prototype.toISOString writes it. */
export const isoTime = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, {
  message: "must be ISO 8601 UTC with milliseconds",
}).refine((text) => !Number.isNaN(Date.parse(text)), { message: "must be a real date and time" });

/** The data classes, in order: a session's taint only goes up this list. */
export const TAINTS = ["public", "private", "secret"] as const;
const taint = z.enum(TAINTS);

/** A data class: "public" < "private" < "secret". */
export type Taint = z.infer<typeof taint>;

const text = z.string().min(1);

/** The plain record of a decision: allowed, ask, or denied with a reason in snake_case. */
export const decisionOutcome = z.discriminatedUnion("outcome", [
  z.strictObject({ outcome: z.literal("allowed") }),
  z.strictObject({ outcome: z.literal("ask") }),
  z.strictObject({
    outcome: z.literal("denied"),
    reason: z.string().regex(/^[a-z][a-z_]*$/, { message: "must be a snake_case reason" }),
  }),
]);

/** What a decision (or a re-decision at approval) came to. */
export type DecisionOutcome = z.infer<typeof decisionOutcome>;

const decision = z.strictObject({
  type: z.literal("decision"),
  session: text,
  call: text,
  tool: text,
  /** In full, exactly as received. */
  arguments: z.string(),
  outcome: decisionOutcome,
  grant: text.nullable(),
  grant_sha256: hash32.nullable(),
  taint,
  untrusted: z.boolean(),
});

const approval = z.strictObject({
  type: z.literal("approval"),
  session: text,
  call: text,
  /** The seq of the Decision record: the approval id the owner typed. */
  decision: seqNumber,
  answer: z.enum(["approved", "refused", "expired"]),
  by: text.nullable(),
  reason: z.string().nullable(),
  outcome: decisionOutcome,
  grant: text.nullable(),
  grant_sha256: hash32.nullable(),
  taint,
  untrusted: z.boolean(),
});

const result = z.strictObject({
  type: z.literal("result"),
  session: text,
  call: text,
  decision: seqNumber,
  status: z.enum(["result", "failed"]),
  class: taint,
  untrusted: z.boolean(),
  truncated: z.boolean(),
  /** Size and hash of the content (or of the failure message), never the content. */
  bytes: count,
  sha256: hash32,
  taint_after: taint,
});

const recovery = z.strictObject({
  type: z.literal("recovery"),
  torn_bytes: count,
  torn_sha256: hash32,
});

const acceptedBreak = z.strictObject({
  type: z.literal("accepted_break"),
  file: text,
  line: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  last_good: hash32,
});

const taskStarted = z.strictObject({
  type: z.literal("task_started"),
  task: text,
  worker: text,
  tools: z.array(text),
  budget_cents: count.nullable(),
});

const taskEnded = z.strictObject({
  type: z.literal("task_ended"),
  task: text,
  state: text,
  reason: z.string().nullable(),
});

/** A vault key set or removed: its name only, never its value. */
const vaultSet = z.strictObject({ type: z.literal("vault_set"), name: text });
const vaultRemoved = z.strictObject({ type: z.literal("vault_removed"), name: text });
/** A vault key turned off (denied) or on again (allowed) for one app: names only. */
const vaultDenied = z.strictObject({ type: z.literal("vault_denied"), app: text, name: text });
const vaultAllowed = z.strictObject({ type: z.literal("vault_allowed"), app: text, name: text });

/** What a /cost or /usage charged a task. */
const cost = z.strictObject({ type: z.literal("cost"), task: text, cents: count, what: text });

/**
 * A connection a task's egress proxy refused: the host as the task named it, the port, and why
 * (not_listed, private_address, sni_mismatch, …). Never a byte the task sent.
 */
const netBlocked = z.strictObject({
  type: z.literal("net_blocked"),
  task: text,
  host: text,
  port: count,
  reason: text,
});

/**
 * A connection an app's egress proxy refused, as net_blocked is for a task's: the app by name, the
 * host as its server named it, the port and why.
 */
const appBlocked = z.strictObject({
  type: z.literal("app_blocked"),
  app: text,
  host: text,
  port: count,
  reason: text,
});

/** The owner installed an app (or replaced its manifest): its name, kind and manifest's hash. */
const appAdded = z.strictObject({
  type: z.literal("app_added"),
  app: text,
  kind: text,
  manifest_sha256: hash32,
});

/** The owner removed an app: its name and the hash of the manifest it had. */
const appRemoved = z.strictObject({
  type: z.literal("app_removed"),
  app: text,
  manifest_sha256: hash32,
});

/** The owner turned an app's tools off (disabled) or on again (enabled). */
const appDisabled = z.strictObject({ type: z.literal("app_disabled"), app: text });
const appEnabled = z.strictObject({ type: z.literal("app_enabled"), app: text });

/** Every event the log holds, tagged by `type`. */
export const auditEvent = z.discriminatedUnion("type", [
  decision,
  approval,
  result,
  recovery,
  acceptedBreak,
  taskStarted,
  taskEnded,
  vaultSet,
  vaultRemoved,
  vaultDenied,
  vaultAllowed,
  cost,
  netBlocked,
  appBlocked,
  appAdded,
  appRemoved,
  appDisabled,
  appEnabled,
]);

/** One event of the audit log. */
export type AuditEvent = z.infer<typeof auditEvent>;

/** The header and the nested event: one JSON line of the log. */
export const auditRecord = z.strictObject({
  seq: seqNumber,
  time: isoTime,
  prev: hash32,
  event: auditEvent,
});

/** One record of the audit log. */
export type AuditRecord = z.infer<typeof auditRecord>;

export { ZERO_HASH } from "./record_check.ts";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A line's bytes as a record, or why they are not one. The line's content never enters `error`. */
export function parseRecordLine(
  bytes: Uint8Array,
): { record: AuditRecord; error: null } | { record: null; error: string } {
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    return { record: null, error: "the line is not a JSON text in UTF-8" };
  }
  return parseRecordText(text);
}

/** A line's text, already decoded from UTF-8, as a record, or why it is not one. */
export function parseRecordText(
  text: string,
): { record: AuditRecord; error: null } | { record: null; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse quotes the text it failed on, which may hold a secret: say only what it is not.
    return { record: null, error: "the line is not a JSON text in UTF-8" };
  }
  // The hand-written check accepts only what the schema accepts, and returns the same value.
  if (isCanonicalRecord(value)) return { record: value as AuditRecord, error: null };
  const parsed = auditRecord.safeParse(value);
  if (parsed.success) return { record: parsed.data, error: null };
  const issue = parsed.error.issues[0];
  const where = issue.path.length === 0 ? "the record" : issue.path.join(".");
  return { record: null, error: `the line is not an audit record: ${where}: ${issue.message}` };
}

/** The JSON line of a record, without its newline, with the fields in schema order. */
export function recordLine(record: AuditRecord): string {
  return JSON.stringify(auditRecord.parse(record));
}

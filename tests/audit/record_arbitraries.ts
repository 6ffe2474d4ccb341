/**
 * fast-check arbitraries of audit records for the record check's and the compact scanner's tests:
 * valid records of every event type, edge values of every JSON type, and mutations of a record.
 */
import fc from "fast-check";
import { ZERO_HASH } from "../../mod/audit/mod.ts";

export type Json = Record<string, unknown>;

export const hex = fc.string({
  unit: fc.constantFrom(..."0123456789abcdef"),
  minLength: 64,
  maxLength: 64,
});
/** Values near every bound of the schema, of every JSON type. */
export const EDGES: unknown[] = [
  0,
  -0,
  -1,
  1,
  1.5,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 1,
  1e300,
  "",
  "x",
  "Abc",
  "a_b",
  "a-b",
  null,
  true,
  false,
  [],
  ["x"],
  [""],
  {},
  ZERO_HASH,
  ZERO_HASH.toUpperCase(),
  ZERO_HASH.slice(1),
  "2026-11-29T18:00:00.000Z",
  "2026-13-29T18:00:00.000Z",
  "2026-11-29T18:00:00Z",
  "public",
  "secret",
  "approved",
  "failed",
  "allowed",
  "ask",
  "denied",
  "decision",
  "accepted_break",
];
const edge = fc.constantFrom(...EDGES);
export const anyValue = fc.oneof(edge, fc.jsonValue({ maxDepth: 2 }));
const text = fc.oneof(fc.constantFrom("a", "task-1", "KEY_1"), fc.string({ minLength: 1 }));
const taint = fc.constantFrom("public", "private", "secret");
const count = fc.oneof(fc.nat(), fc.constant(Number.MAX_SAFE_INTEGER));
const outcome = fc.oneof(
  fc.constant({ outcome: "allowed" }),
  fc.constant({ outcome: "ask" }),
  fc.record({ outcome: fc.constant("denied"), reason: fc.stringMatching(/^[a-z][a-z_]*$/) }),
);
const time = fc.date({
  min: new Date("0000-01-01T00:00:00.000Z"),
  max: new Date("9999-12-31T23:59:59.999Z"),
  noInvalidDate: true,
}).map((date) => date.toISOString());

/** Valid events of every type, their keys in schema order. */
export const event = fc.oneof(
  fc.record({
    type: fc.constant("decision"),
    session: text,
    call: text,
    tool: text,
    arguments: fc.string(),
    outcome,
    grant: fc.option(text),
    grant_sha256: fc.option(hex),
    taint,
    untrusted: fc.boolean(),
  }),
  fc.record({
    type: fc.constant("approval"),
    session: text,
    call: text,
    decision: count,
    answer: fc.constantFrom("approved", "refused", "expired"),
    by: fc.option(text),
    reason: fc.option(fc.string()),
    outcome,
    grant: fc.option(text),
    grant_sha256: fc.option(hex),
    taint,
    untrusted: fc.boolean(),
  }),
  fc.record({
    type: fc.constant("result"),
    session: text,
    call: text,
    decision: count,
    status: fc.constantFrom("result", "failed"),
    class: taint,
    untrusted: fc.boolean(),
    truncated: fc.boolean(),
    bytes: count,
    sha256: hex,
    taint_after: taint,
  }),
  fc.record({ type: fc.constant("recovery"), torn_bytes: count, torn_sha256: hex }),
  fc.record({
    type: fc.constant("accepted_break"),
    file: text,
    line: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    last_good: hex,
  }),
  fc.record({
    type: fc.constant("task_started"),
    task: text,
    worker: text,
    tools: fc.array(text, { maxLength: 3 }),
    budget_cents: fc.option(count),
  }),
  fc.record({
    type: fc.constant("task_ended"),
    task: text,
    state: text,
    reason: fc.option(fc.string()),
  }),
  fc.record({ type: fc.constantFrom("vault_set", "vault_removed"), name: text }),
  fc.record({ type: fc.constantFrom("vault_denied", "vault_allowed"), app: text, name: text }),
  fc.record({
    type: fc.constant("net_blocked"),
    task: text,
    host: text,
    port: fc.integer({ min: 0, max: 65535 }),
    reason: text,
  }),
  fc.record({ type: fc.constant("cost"), task: text, cents: count, what: text }),
  fc.record({
    type: fc.constant("app_blocked"),
    app: text,
    host: text,
    port: fc.integer({ min: 0, max: 65535 }),
    reason: text,
  }),
  fc.record({ type: fc.constant("app_added"), app: text, kind: text, manifest_sha256: hex }),
  fc.record({ type: fc.constant("app_removed"), app: text, manifest_sha256: hex }),
  fc.record({ type: fc.constantFrom("app_enabled", "app_disabled"), app: text }),
);
export const record = fc.record({ seq: count, time, prev: hex, event });

/** The objects of a record a mutation may change: the record, its event, the event's outcome. */
export function objectsOf(value: Json): Json[] {
  const event = value.event as Json;
  const objects = [value, event];
  if (typeof event.outcome === "object" && event.outcome !== null) {
    objects.push(event.outcome as Json);
  }
  if (Array.isArray(event.tools)) objects.push(event.tools as unknown as Json);
  return objects;
}

export type Mutation =
  | { kind: "none" }
  | { kind: "add"; where: number; key: string; value: unknown }
  | { kind: "remove"; where: number; pick: number }
  | { kind: "replace"; where: number; pick: number; value: unknown }
  | { kind: "reorder"; where: number; pick: number };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.constant({ kind: "none" as const }),
  fc.record({
    kind: fc.constant("add" as const),
    where: fc.nat(3),
    key: fc.oneof(fc.constantFrom("extra", "seq", "type", "__proto__", "0"), fc.string()),
    value: anyValue,
  }),
  fc.record({ kind: fc.constant("remove" as const), where: fc.nat(3), pick: fc.nat(20) }),
  fc.record({
    kind: fc.constant("replace" as const),
    where: fc.nat(3),
    pick: fc.nat(20),
    value: anyValue,
  }),
  fc.record({ kind: fc.constant("reorder" as const), where: fc.nat(3), pick: fc.nat(20) }),
);

/** The record as JSON text with one mutation, then parsed back as the verifier parses a line. */
export function mutated(value: Json, change: Mutation): unknown {
  const copy = JSON.parse(JSON.stringify(value)) as Json;
  if (change.kind === "none") return copy;
  const objects = objectsOf(copy);
  const target = objects[change.where % objects.length];
  const keys = Object.keys(target);
  if (change.kind === "add") {
    // An array's length cannot be redefined (fast-check's strings include "length"): no change.
    const fixed = Object.getOwnPropertyDescriptor(target, change.key)?.configurable === false;
    if (!fixed) {
      Object.defineProperty(target, change.key, {
        value: change.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  } else if (keys.length > 0) {
    const key = keys[change.pick % keys.length];
    if (change.kind === "remove") delete target[key];
    if (change.kind === "replace") target[key] = change.value;
    if (change.kind === "reorder") {
      const moved = target[key];
      delete target[key];
      target[key] = moved;
    }
  }
  // Through JSON text, as a line is: undefined values drop out, -0 and "__proto__" stay as JSON
  // would give them.
  return JSON.parse(JSON.stringify(copy));
}

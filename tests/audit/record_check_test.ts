/**
 * The verifier's hand-written record check agrees with the zod schema: it accepts a value exactly
 * when the schema accepts it and returns the same value (every key in schema order), over valid
 * records of every event type and their mutations: unknown fields, wrong types, missing fields,
 * edge values and keys out of order.
 */
import fc from "fast-check";
import {
  auditRecord,
  isCanonicalRecord,
  isIsoTime,
  recordLine,
  scanRecordLine,
  ZERO_HASH,
} from "../../mod/audit/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { sampleEvent } from "./helpers.ts";

type Json = Record<string, unknown>;

const hex = fc.string({
  unit: fc.constantFrom(..."0123456789abcdef"),
  minLength: 64,
  maxLength: 64,
});
/** Values near every bound of the schema, of every JSON type. */
const EDGES: unknown[] = [
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
const anyValue = fc.oneof(edge, fc.jsonValue({ maxDepth: 2 }));
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
const event = fc.oneof(
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
  fc.record({ type: fc.constant("cost"), task: text, cents: count, what: text }),
);
const record = fc.record({ seq: count, time, prev: hex, event });

/** The objects of a record a mutation may change: the record, its event, the event's outcome. */
function objectsOf(value: Json): Json[] {
  const event = value.event as Json;
  const objects = [value, event];
  if (typeof event.outcome === "object" && event.outcome !== null) {
    objects.push(event.outcome as Json);
  }
  if (Array.isArray(event.tools)) objects.push(event.tools as unknown as Json);
  return objects;
}

type Mutation =
  | { kind: "none" }
  | { kind: "add"; where: number; key: string; value: unknown }
  | { kind: "remove"; where: number; pick: number }
  | { kind: "replace"; where: number; pick: number; value: unknown }
  | { kind: "reorder"; where: number; pick: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
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
function mutated(value: Json, change: Mutation): unknown {
  const copy = JSON.parse(JSON.stringify(value)) as Json;
  if (change.kind === "none") return copy;
  const objects = objectsOf(copy);
  const target = objects[change.where % objects.length];
  const keys = Object.keys(target);
  if (change.kind === "add") {
    Object.defineProperty(target, change.key, {
      value: change.value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
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

/** What the schema says: accepted with these exact bytes when written out again, or refused. */
function schemaAccepts(value: unknown): boolean {
  const parsed = auditRecord.safeParse(value);
  return parsed.success && JSON.stringify(parsed.data) === JSON.stringify(value);
}

Deno.test("the hand-written record check accepts every valid record in schema order", () => {
  fc.assert(
    fc.property(record, (value) => {
      const line = JSON.parse(JSON.stringify(value));
      assert(auditRecord.safeParse(line).success, "the generator made an invalid record");
      assert(isCanonicalRecord(line), `refused: ${JSON.stringify(line)}`);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("the hand-written record check agrees with the zod schema on mutated records", () => {
  fc.assert(
    fc.property(record, mutation, (value, change) => {
      const line = mutated(value as Json, change);
      assertEquals(isCanonicalRecord(line), schemaAccepts(line), JSON.stringify(line));
    }),
    { numRuns: 20000 },
  );
});

Deno.test("the hand-written record check accepts the writer's own lines", () => {
  for (let i = 0; i < 8; i++) {
    const line = recordLine({
      seq: i,
      time: "2026-11-29T18:00:00.000Z",
      prev: ZERO_HASH,
      event: sampleEvent(i),
    });
    assert(isCanonicalRecord(JSON.parse(line)), line);
  }
});

Deno.test("the hand-written record check refuses keys out of schema order, which zod accepts", () => {
  const value = {
    time: "2026-11-29T18:00:00.000Z",
    seq: 0,
    prev: ZERO_HASH,
    event: sampleEvent(2),
  };
  assert(auditRecord.safeParse(value).success);
  assert(!isCanonicalRecord(value));
});

Deno.test("the hand-written record check agrees with the zod schema on every edge value of every field", () => {
  const samples = fc.sample(record, { numRuns: 150, seed: 3 }) as Json[];
  let checked = 0;
  for (const value of samples) {
    const objects = objectsOf(value).length;
    for (let where = 0; where < objects; where++) {
      for (let pick = 0; pick < 12; pick++) {
        for (const edgeValue of EDGES) {
          const line = mutated(value, { kind: "replace", where, pick, value: edgeValue });
          assertEquals(isCanonicalRecord(line), schemaAccepts(line), JSON.stringify(line));
          checked++;
        }
      }
    }
  }
  assert(checked > 10000);
});

/**
 * What the line scanner may say of a line: nothing (null), or the record JSON.parse gives, and
 * then only for a line the check accepts. A line of ASCII written canonically must be read, so
 * that the fast path is the one taken (task_started, with its array, is left to JSON.parse; a
 * line that is not all ASCII is left to it too).
 */
function assertScanAgrees(line: string): void {
  const scanned = scanRecordLine(line);
  let value: unknown = undefined;
  let parses = true;
  try {
    value = JSON.parse(line);
  } catch {
    parses = false;
  }
  if (scanned !== null) {
    assert(
      parses && isCanonicalRecord(value),
      `the scanner read a line the check refuses: ${line}`,
    );
    assertEquals(scanned as unknown, value, line);
    return;
  }
  // deno-lint-ignore no-control-regex
  const ascii = /^[\x00-\x7f]*$/.test(line);
  if (ascii && parses && isCanonicalRecord(value) && JSON.stringify(value) === line) {
    const type = ((value as Json).event as Json).type;
    assert(type === "task_started", `the scanner refused a canonical line: ${line}`);
  }
}

Deno.test("the line scanner reads every valid record's line as JSON.parse and the check do", () => {
  fc.assert(
    fc.property(record, (value) => assertScanAgrees(JSON.stringify(value))),
    { numRuns: 3000 },
  );
  for (let i = 0; i < 8; i++) {
    const line = recordLine({
      seq: i,
      time: "2026-11-29T18:00:00.000Z",
      prev: ZERO_HASH,
      event: sampleEvent(i),
    });
    assert(scanRecordLine(line) !== null, line);
    assertScanAgrees(line);
  }
});

Deno.test("the line scanner agrees with JSON.parse and the check on mutated records", () => {
  fc.assert(
    fc.property(record, mutation, (value, change) => {
      assertScanAgrees(JSON.stringify(mutated(value as Json, change)));
    }),
    { numRuns: 20000 },
  );
});

/** Characters that matter to JSON, numbers, strings and escapes. */
const CHARACTERS = [...'"{}[],:0123456789-+.eEtrufalsn \t\u0000\u001f\u007fu/bx\u00e9\u2028\ud800'];

Deno.test("the line scanner agrees with JSON.parse and the check on lines with characters changed", () => {
  const edit = fc.record({
    at: fc.nat(),
    kind: fc.constantFrom("replace", "insert", "delete"),
    text: fc.oneof(fc.constantFrom(...CHARACTERS), fc.string({ maxLength: 3 })),
  });
  fc.assert(
    fc.property(record, fc.array(edit, { minLength: 1, maxLength: 3 }), (value, edits) => {
      let line = JSON.stringify(value);
      for (const e of edits) {
        const at = e.at % (line.length + 1);
        const cut = e.kind === "insert" ? 0 : 1;
        const put = e.kind === "delete" ? "" : e.text;
        line = line.slice(0, at) + put + line.slice(at + cut);
      }
      assertScanAgrees(line);
    }),
    { numRuns: 20000 },
  );
});

Deno.test("the line scanner agrees with JSON.parse and the check on every edge value of every field", () => {
  const samples = fc.sample(record, { numRuns: 150, seed: 5 }) as Json[];
  for (const value of samples) {
    for (let where = 0; where < objectsOf(value).length; where++) {
      for (let pick = 0; pick < 12; pick++) {
        for (const edgeValue of EDGES) {
          assertScanAgrees(
            JSON.stringify(mutated(value, { kind: "replace", where, pick, value: edgeValue })),
          );
        }
      }
    }
  }
});

/** records.ts's isoTime, as the schema and isCanonicalRecord judge a time. */
function schemaTime(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(text) &&
    !Number.isNaN(Date.parse(text));
}

function two(n: number): string {
  return String(n).padStart(2, "0");
}

Deno.test("the scanner's time check agrees with the regex and Date.parse on every month and day", () => {
  for (const year of ["0000", "1970", "2024", "2026", "9999"]) {
    for (let month = 0; month < 100; month++) {
      for (let day = 0; day < 100; day++) {
        for (const time of ["00:00:00.000", "23:59:59.999", "24:00:00.000"]) {
          const text = `${year}-${two(month)}-${two(day)}T${time}Z`;
          assertEquals(isIsoTime(text), schemaTime(text), text);
        }
      }
    }
  }
});

Deno.test("the scanner's time check agrees with the regex and Date.parse on every hour, minute and second", () => {
  for (let hour = 0; hour < 100; hour++) {
    const milliseconds = hour >= 23 && hour <= 25 ? ["000", "001", "999"] : ["000"];
    for (let minute = 0; minute < 100; minute++) {
      for (let second = 0; second < 100; second++) {
        for (const ms of milliseconds) {
          const text = `2026-12-31T${two(hour)}:${two(minute)}:${two(second)}.${ms}Z`;
          assertEquals(isIsoTime(text), schemaTime(text), text);
        }
      }
    }
  }
});

Deno.test("the scanner's time check agrees with the regex and Date.parse on changed times", () => {
  const time = fc.date({
    min: new Date("0000-01-01T00:00:00.000Z"),
    max: new Date("9999-12-31T23:59:59.999Z"),
    noInvalidDate: true,
  }).map((date) => date.toISOString());
  fc.assert(
    fc.property(
      time,
      fc.nat(25),
      fc.oneof(fc.constantFrom(..."0123456789-:.TZ +x\u0660"), fc.string({ maxLength: 2 })),
      (text, at, put) => {
        const changed = text.slice(0, at) + put + text.slice(at + 1);
        assertEquals(isIsoTime(changed), schemaTime(changed), changed);
        assertEquals(isIsoTime(text), true, text);
      },
    ),
    { numRuns: 20000 },
  );
});

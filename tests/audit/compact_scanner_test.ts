/**
 * The compact scanner agrees with the full zod check: it reads a line only if the line is the JSON
 * of a record records.ts's schema accepts with its keys in schema order, and what it reads (seq,
 * time, the event's type, outcome, decision and answer, where the prev is) is what that record
 * says; it reads every ASCII line written as the writer writes it of every event type but
 * recovery, accepted_break and task_started. Over valid records of every event type, their
 * mutations, lines with characters changed, edge values and escapes; and it compares the prev with
 * the hash of the line before where both are.
 */
import fc from "fast-check";
import {
  ALLOWED,
  APPROVAL,
  ASK,
  auditRecord,
  compactLine,
  CompactScanner,
  DECISION,
  DENIED,
  EVENT_FIELDS,
  OTHER,
  RESULT,
} from "../../mod/audit/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { writerLines } from "./helpers.ts";
import { EDGES, type Json, mutated, mutation, objectsOf, record } from "./record_arbitraries.ts";

const encoder = new TextEncoder();

/** The types the machine needs whole records of, or whose array the scanner does not read. */
const LEFT_ALONE = ["recovery", "accepted_break", "task_started"];

/** The record zod gives for the line, if the line is the JSON of one with keys in schema order. */
function zodRecord(line: string): Json | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const parsed = auditRecord.safeParse(value);
  if (!parsed.success || JSON.stringify(parsed.data) !== JSON.stringify(value)) return null;
  return parsed.data as unknown as Json;
}

/** What the compact scanner should read of a record, as the machine's numbers. */
function expected(value: Json): Json {
  const event = value.event as Json;
  const outcome = (event.outcome as Json | undefined)?.outcome;
  const time = value.time as string;
  return {
    seq: value.seq,
    date: Number(time.slice(0, 4) + time.slice(5, 7) + time.slice(8, 10)),
    clock: Number(
      time.slice(11, 13) + time.slice(14, 16) + time.slice(17, 19) + time.slice(20, 23),
    ),
    type: event.type === "decision"
      ? DECISION
      : event.type === "approval"
      ? APPROVAL
      : event.type === "result"
      ? RESULT
      : OTHER,
    outcome: outcome === "allowed"
      ? ALLOWED
      : outcome === "ask"
      ? ASK
      : outcome === "denied"
      ? DENIED
      : 0,
    decision: event.type === "approval" || event.type === "result" ? event.decision : 0,
    approved: event.type === "approval" && event.answer === "approved",
    prev: value.prev,
  };
}

/**
 * The compact scanner reads nothing of the line, or what zod's record of it says; and it reads
 * every line written as the writer writes it (JSON.stringify of what zod accepts, all ASCII), of
 * the event types it takes. The line sits between two others in the content, as in a chunk.
 * Returns whether the scanner read it.
 */
function assertCompactAgrees(line: string): boolean {
  const before = "x\n";
  const content = encoder.encode(`${before}${line}\n{}`);
  const start = before.length;
  const end = content.length - 3;
  const scanner = new CompactScanner();
  scanner.content(content);
  const out = compactLine();
  // The line's own hash at 32, so that its prev is compared with the one at 0.
  out.digests = new Uint8Array(64);
  out.digestAt = 32;
  const read = scanner.scan(start, end, out);
  const schema = zodRecord(line);
  if (!read) {
    // deno-lint-ignore no-control-regex
    const ascii = /^[\x00-\x7f]*$/.test(line);
    const type = schema === null ? null : (schema.event as Json).type as string;
    assert(
      schema === null || !ascii || JSON.stringify(schema) !== line || LEFT_ALONE.includes(type!),
      `the compact scanner refused a line written as the writer writes it: ${line}`,
    );
    return false;
  }
  assert(schema !== null, `the compact scanner read a line zod refuses: ${line}`);
  const prev = new TextDecoder().decode(content.subarray(out.prevAt, out.prevAt + 64));
  assertEquals(
    {
      seq: out.seq,
      date: out.date,
      clock: out.clock,
      type: out.type,
      outcome: out.outcome,
      decision: out.decision,
      approved: out.approved,
      prev,
    },
    expected(schema),
    line,
  );
  // The scan compares the prev with the hash of the line before, where both are.
  for (let k = 0; k < 32; k++) out.digests[k] = parseInt(prev.slice(2 * k, 2 * k + 2), 16);
  assert(scanner.scan(start, end, out) && out.prevIsLast, line);
  out.digests[out.seq % 32] ^= 1;
  assert(scanner.scan(start, end, out) && !out.prevIsLast, line);
  // The first line of a chunk has no hash before it there.
  out.digests[out.seq % 32] ^= 1;
  out.digestAt = 0;
  assert(scanner.scan(start, end, out) && !out.prevIsLast, line);
  return true;
}

Deno.test("the compact scanner reads every valid record of every event type as zod does", () => {
  const seen = new Map<string, number>();
  fc.assert(
    fc.property(record, (value) => {
      const line = JSON.stringify(value);
      const type = (value.event as Json).type as string;
      // deno-lint-ignore no-control-regex
      const ascii = /^[\x00-\x7f]*$/.test(line);
      const read = assertCompactAgrees(line);
      if (ascii) assertEquals(read, !LEFT_ALONE.includes(type), line);
      seen.set(type, (seen.get(type) ?? 0) + 1);
    }),
    { numRuns: 3000 },
  );
  // Every event type of the schema was generated, those left alone included.
  for (const type of Object.keys(EVENT_FIELDS)) assert((seen.get(type) ?? 0) > 20, type);
  for (const line of writerLines()) assert(assertCompactAgrees(line), line);
});

Deno.test("the compact scanner agrees with zod on mutated records", () => {
  fc.assert(
    fc.property(record, mutation, (value, change) => {
      assertCompactAgrees(JSON.stringify(mutated(value as Json, change)));
    }),
    { numRuns: 20000 },
  );
});

/** Characters that matter to JSON, numbers, strings and escapes. */
const CHARACTERS = [
  ...'"\\{}[],:0123456789-+.eEtrufalsn \t\u0000\u001f\u007fu/bx\u00e9\u2028\ud800AFf',
];

Deno.test("the compact scanner agrees with zod on lines with characters changed", () => {
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
      assertCompactAgrees(line);
    }),
    { numRuns: 20000 },
  );
});

Deno.test("the compact scanner agrees with zod on every edge value of every field", () => {
  const samples = fc.sample(record, { numRuns: 150, seed: 5 }) as Json[];
  for (const value of samples) {
    for (let where = 0; where < objectsOf(value).length; where++) {
      for (let pick = 0; pick < 12; pick++) {
        for (const edgeValue of EDGES) {
          assertCompactAgrees(
            JSON.stringify(mutated(value, { kind: "replace", where, pick, value: edgeValue })),
          );
        }
      }
    }
  }
});

Deno.test("the compact scanner reads escapes as JSON does: valid ones only", () => {
  const base = JSON.parse(writerLines()[0]) as Json;
  for (
    const call of [
      'a\\"b',
      "\\u00e9",
      "\\u00E9",
      "\\n\\t\\/\\b\\f\\r\\\\",
      "\\x41",
      "\\u12",
      "\\u12g4",
      "\\",
    ]
  ) {
    const line = JSON.stringify(base).replace(
      `"call":${JSON.stringify((base.event as Json).call)}`,
      `"call":"${call}"`,
    );
    assertCompactAgrees(line);
  }
});

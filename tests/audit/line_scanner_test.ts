/**
 * The verifier's line scanner says nothing of a line, or gives the record JSON.parse gives, and
 * then only for a line the hand-written check accepts; it reads every ASCII line written
 * canonically. Over valid records of every event type, their mutations, lines with characters
 * changed, and edge values; and its time check agrees with the regex and Date.parse.
 */
import fc from "fast-check";
import { isCanonicalRecord, isIsoTime, scanRecordLine } from "../../mod/audit/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { writerLines } from "./helpers.ts";
import { EDGES, type Json, mutated, mutation, objectsOf, record } from "./record_arbitraries.ts";

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
  for (const line of writerLines()) {
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
const CHARACTERS = [
  ...'"\\{}[],:0123456789-+.eEtrufalsn \t\u0000\u001f\u007fu/bx\u00e9\u2028\ud800',
];

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

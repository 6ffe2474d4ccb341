/**
 * The verifier's byte readers agree with JSON.parse and with the schema's time check: a JsonCursor
 * reads a string, a whole number or a hash exactly when JSON.parse reads that value there (and the
 * value is one the schema takes); isIsoTime agrees with the regex and Date.parse on every month,
 * day, hour, minute and second; asciiText decodes a line at any offset of its buffer.
 */
import fc from "fast-check";
import { asciiText, isIsoTime, JsonCursor } from "../../mod/audit/mod.ts";
import { assert, assertEquals } from "../assert.ts";

const encoder = new TextEncoder();

/** A cursor at the start of the text, placed after a byte of something else, as in a line. */
function cursorOn(text: string): { cursor: JsonCursor; end: number } {
  const cursor = new JsonCursor();
  cursor.bytes = encoder.encode(`x${text}y`);
  cursor.at = 1;
  return { cursor, end: cursor.bytes.length - 1 };
}

function parsed(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Characters that matter to JSON strings and numbers. */
const CHARACTERS = [
  ...'"\\/0123456789-+.eEbfnrtux \t\u0000\u001f\u007f\u00e9\u2028\ud800AFf',
];
const piece = fc.oneof(fc.constantFrom(...CHARACTERS), fc.string({ maxLength: 3 }));

Deno.test("a cursor reads a JSON string exactly when JSON.parse reads one of ASCII there", () => {
  const text = fc.oneof(
    fc.string().map((value) => JSON.stringify(value)),
    fc.array(piece, { maxLength: 8 }).map((pieces) => `"${pieces.join("")}"`),
    fc.array(piece, { maxLength: 8 }).map((pieces) => pieces.join("")),
  );
  fc.assert(
    fc.property(text, fc.boolean(), (json, nonEmpty) => {
      const { cursor, end } = cursorOn(json);
      const read = cursor.string(end, nonEmpty) && cursor.at === end;
      const result = parsed(json);
      // deno-lint-ignore no-control-regex
      const ascii = /^[\x00-\x7f]*$/.test(json);
      const expected = ascii && json.startsWith('"') && json.endsWith('"') && result.ok &&
        typeof result.value === "string" && (!nonEmpty || result.value.length > 0);
      assertEquals(read, expected, json);
    }),
    { numRuns: 20000 },
  );
});

Deno.test("a cursor reads a whole number exactly when JSON.stringify writes that safe integer so", () => {
  const text = fc.oneof(
    fc.nat().map(String),
    fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String),
    fc.constantFrom(
      String(Number.MAX_SAFE_INTEGER),
      String(Number.MAX_SAFE_INTEGER + 1),
      "9999999999999999",
      "00",
      "01",
      "-0",
      "-1",
      "1.0",
      "1e3",
      "",
    ),
    fc.array(piece, { minLength: 1, maxLength: 4 }).map((pieces) => pieces.join("")),
  );
  fc.assert(
    fc.property(text, (json) => {
      const { cursor, end } = cursorOn(json);
      const value = cursor.wholeNumber(end);
      const read = value >= 0 && cursor.at === end ? value : -1;
      const result = parsed(json);
      const expected = result.ok && Number.isSafeInteger(result.value) &&
          (result.value as number) >= 0 && JSON.stringify(result.value) === json
        ? result.value
        : -1;
      assertEquals(read, expected, json);
    }),
    { numRuns: 20000 },
  );
});

Deno.test("a cursor reads a hash exactly when it is 64 lowercase hex digits in quotes", () => {
  const hex = fc.string({
    unit: fc.constantFrom(..."0123456789abcdefABCDEFg"),
    minLength: 62,
    maxLength: 66,
  });
  fc.assert(
    fc.property(hex, (digits) => {
      const { cursor, end } = cursorOn(`"${digits}"`);
      assertEquals(cursor.hash(end), /^[0-9a-f]{64}$/.test(digits), digits);
    }),
    { numRuns: 5000 },
  );
});

Deno.test("asciiText reads a line of any length at any offset of its buffer", () => {
  // The verifier decodes a line alone, where it lies in its chunk.
  const buffer = new TextEncoder().encode("abcdefgh\u00e9");
  for (let start = 0; start <= buffer.length; start++) {
    for (let end = start; end <= buffer.length; end++) {
      const part = buffer.subarray(start, end);
      const ascii = part.every((byte) => byte < 128);
      assertEquals(
        asciiText(part),
        ascii ? new TextDecoder().decode(part) : null,
        `${start}-${end}`,
      );
    }
  }
});

/** records.ts's isoTime, as the schema judges a time. */
function schemaTime(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(text) &&
    !Number.isNaN(Date.parse(text));
}

function two(n: number): string {
  return String(n).padStart(2, "0");
}

Deno.test("the time check agrees with the regex and Date.parse on every month and day", () => {
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

Deno.test("the time check agrees with the regex and Date.parse on every hour, minute and second", () => {
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

Deno.test("the time check agrees with the regex and Date.parse on changed times", () => {
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
        assert(isIsoTime(text), text);
      },
    ),
    { numRuns: 20000 },
  );
});

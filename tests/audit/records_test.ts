/** Records are parsed strictly: unknown fields anywhere are rejected, and errors hide content. */
import { auditRecord, parseRecordLine, recordLine, ZERO_HASH } from "../../mod/audit/mod.ts";
import { assert, assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { sampleEvent } from "./helpers.ts";

const encoder = new TextEncoder();
const record = { seq: 0, time: "2026-11-29T18:00:00.000Z", prev: ZERO_HASH, event: sampleEvent(0) };

function errorOf(value: unknown): string {
  const parsed = parseRecordLine(encoder.encode(JSON.stringify(value)));
  assert(parsed.error !== null, `expected ${JSON.stringify(value)} to be refused`);
  return parsed.error;
}

Deno.test("a record line has its fields in schema order: seq, time, prev, then the event by type", () => {
  const line = recordLine({ event: sampleEvent(0), prev: ZERO_HASH, time: record.time, seq: 0 });
  assert(
    line.startsWith(
      `{"seq":0,"time":"${record.time}","prev":"${ZERO_HASH}","event":{"type":"decision",`,
    ),
  );
  assertEquals(parseRecordLine(encoder.encode(line)).record, auditRecord.parse(record));
});

Deno.test("an unknown field in the record is refused", () => {
  assertStringIncludes(errorOf({ ...record, extra: 1 }), "extra");
});

Deno.test("an unknown field in the event is refused", () => {
  assertStringIncludes(errorOf({ ...record, event: { ...record.event, extra: 1 } }), "extra");
});

Deno.test("an unknown field in an allowed outcome is refused", () => {
  const event = { ...record.event, outcome: { outcome: "allowed", x: 1 } };
  assertStringIncludes(errorOf({ ...record, event }), "x");
});

Deno.test("a time that is not ISO 8601 UTC with milliseconds is refused", () => {
  assertStringIncludes(errorOf({ ...record, time: "2026-11-29T18:00:00Z" }), "time");
});

Deno.test("the error for a line that is not JSON does not quote the line", () => {
  const parsed = parseRecordLine(encoder.encode('{"seq":0,"arguments":"sk-live-SECRET'));
  assert(parsed.error !== null);
  assertNotIncludes(parsed.error, "SECRET");
});

Deno.test("a line that is not UTF-8 is refused", () => {
  const bytes = encoder.encode(JSON.stringify(record));
  bytes[40] = 0xff;
  assertStringIncludes(parseRecordLine(bytes).error ?? "", "UTF-8");
});

/** Timestamps in grants' expires and `--at`: RFC 3339 with a zone, every field checked. */
import { parseTimestamp } from "../../mod/policy/mod.ts";
import { assertEquals } from "../assert.ts";

Deno.test("timestamps with Z or an offset, with or without fractions, parse to the right instant", () => {
  assertEquals(
    parseTimestamp("2027-01-01T00:00:00.000Z")?.toISOString(),
    "2027-01-01T00:00:00.000Z",
  );
  assertEquals(
    parseTimestamp("2027-01-01T01:00:00+01:00")?.toISOString(),
    "2027-01-01T00:00:00.000Z",
  );
  assertEquals(
    parseTimestamp("2026-12-31T18:30:00.5-05:30")?.toISOString(),
    "2027-01-01T00:00:00.500Z",
  );
  assertEquals(
    parseTimestamp("2027-01-01T00:00:00.123456789Z")?.getTime(),
    Date.UTC(2027, 0, 1, 0, 0, 0, 123),
  );
});

Deno.test("a time without a zone, or a day or time that does not exist, is not a timestamp", () => {
  for (
    const text of [
      "2027-01-01T00:00:00",
      "2027-01-01",
      "2027-02-29T00:00:00Z",
      "2027-13-01T00:00:00Z",
      "2027-01-01T24:00:00Z",
      "2027-01-01T00:60:00Z",
      "2027-01-01T00:00:60Z",
      "2027-01-01T00:00:00+24:00",
      "2027-01-01 00:00:00Z",
      "tomorrow",
    ]
  ) {
    assertEquals(parseTimestamp(text), null, text);
  }
  assertEquals(parseTimestamp("2028-02-29T00:00:00Z")?.toISOString(), "2028-02-29T00:00:00.000Z");
});

/**
 * The verifier's hand-written record check agrees with the zod schema: it accepts a value exactly
 * when the schema accepts it and returns the same value (every key in schema order), over valid
 * records of every event type and their mutations: unknown fields, wrong types, missing fields,
 * edge values and keys out of order.
 */
import fc from "fast-check";
import {
  auditEvent,
  auditRecord,
  EVENT_FIELDS,
  isCanonicalRecord,
  ZERO_HASH,
} from "../../mod/audit/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import { sampleEvent, writerLines } from "./helpers.ts";
import { EDGES, type Json, mutated, mutation, objectsOf, record } from "./record_arbitraries.ts";

/** What the schema says: accepted with these exact bytes when written out again, or refused. */
function schemaAccepts(value: unknown): boolean {
  const parsed = auditRecord.safeParse(value);
  return parsed.success && JSON.stringify(parsed.data) === JSON.stringify(value);
}

Deno.test("the event table lists the schema's event types, each with its keys in schema order", () => {
  const schemas = auditEvent.options.map((schema) => Object.keys(schema.shape));
  const table = Object.values(EVENT_FIELDS).map((fields) => [
    "type",
    ...fields.map((field) => field.key),
  ]);
  assertEquals(table, schemas);
  assertEquals(
    Object.keys(EVENT_FIELDS),
    auditEvent.options.map((schema) => schema.shape.type.value),
  );
});

Deno.test("the hand-written record check accepts every valid record of every event type", () => {
  const seen = new Map<string, number>();
  fc.assert(
    fc.property(record, (value) => {
      const line = JSON.parse(JSON.stringify(value));
      assert(auditRecord.safeParse(line).success, "the generator made an invalid record");
      assert(isCanonicalRecord(line), `refused: ${JSON.stringify(line)}`);
      const type = (value.event as Json).type as string;
      seen.set(type, (seen.get(type) ?? 0) + 1);
    }),
    { numRuns: 2000 },
  );
  for (const type of Object.keys(EVENT_FIELDS)) assert((seen.get(type) ?? 0) > 20, type);
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
  for (const line of writerLines()) {
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

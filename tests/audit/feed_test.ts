/**
 * feed decodes a file's text once when it is all ASCII and each line alone otherwise; either way
 * its report is the one of feeding the same lines one by one, wherever the content starts in its
 * buffer and whatever byte (ASCII, UTF-8 or not UTF-8) is changed.
 */
import fc from "fast-check";
import { type AuditEvent, ChainVerifier, recordLine, sha256Hex } from "../../mod/audit/mod.ts";
import { assertEquals } from "../assert.ts";
import { DAY2, sampleEvent } from "./helpers.ts";

const encoder = new TextEncoder();

/** A chained log of `count` records, some names not ASCII, as the writer would write it. */
function log(count: number, names: string[]): Uint8Array {
  let prev = "0".repeat(64);
  let text = "";
  for (let seq = 0; seq < count; seq++) {
    const event: AuditEvent = seq % 2 === 0
      ? sampleEvent(seq)
      : { type: "vault_set", name: names[seq % names.length] };
    const line = recordLine({ seq, time: "2026-11-29T10:00:00.000Z", prev, event });
    prev = sha256Hex(encoder.encode(line));
    text += `${line}\n`;
  }
  return encoder.encode(text);
}

function lineByLine(content: Uint8Array): ReturnType<ChainVerifier["finish"]> {
  const verifier = new ChainVerifier();
  verifier.file(DAY2);
  let start = 0;
  while (start < content.length) {
    const found = content.indexOf(10, start);
    const end = found === -1 ? content.length : found;
    verifier.line(content.subarray(start, end), found !== -1);
    start = end + 1;
  }
  return verifier.finish();
}

Deno.test("feeding a file reports as feeding its lines one by one, ASCII or not, at any offset", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 12 }),
      fc.array(fc.constantFrom("KEY", "KËY", "鍵", "🔑", "K\u007fY"), {
        minLength: 1,
        maxLength: 3,
      }),
      fc.option(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) })),
      fc.boolean(),
      fc.nat(7),
      (count, names, change, cutNewline, offset) => {
        let content = log(count, names);
        if (cutNewline) content = content.subarray(0, content.length - 1);
        if (change !== null) content[change.at % content.length] = change.byte;
        const buffer = new Uint8Array(content.length + offset);
        buffer.set(content, offset);
        const shifted = buffer.subarray(offset);
        const fed = new ChainVerifier();
        fed.feed(DAY2, shifted);
        assertEquals(fed.finish(), lineByLine(content));
      },
    ),
    { numRuns: 500 },
  );
});

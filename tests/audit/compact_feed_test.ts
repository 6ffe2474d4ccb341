/**
 * verifyHome's compact path (file_feed.ts: most lines read as numbers, prevs compared with the
 * digests where they are) reports exactly what ChainVerifier.feed reports, on logs that reach every
 * state of the judging machine: asks, approvals and results of earlier decisions, times that go
 * backwards, torn lines with their Recovery records, bad lines and the AcceptedBreak records that
 * name them, a torn last line; over several files and any chunk size.
 */
import fc from "fast-check";
import {
  type AuditEvent,
  ChainMachine,
  ChainVerifier,
  feedFile,
  localHasher,
  recordLine,
  sha256Hex,
} from "../../mod/audit/mod.ts";
import { assertEquals } from "../assert.ts";

const encoder = new TextEncoder();
const NAMES = ["2026-11-27.jsonl", "2026-11-28.jsonl", "2026-11-29.jsonl"];
const TIMES = ["2026-11-29T10:00:00.000Z", "2026-11-29T10:00:00.001Z", "2026-11-28T23:59:59.999Z"];

type Step =
  | { kind: "event"; which: number; ref: number; time: number }
  | { kind: "torn"; cut: number }
  | { kind: "bad"; lines: number; heal: boolean }
  | { kind: "file" };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("event" as const),
      which: fc.nat(9),
      ref: fc.nat(),
      time: fc.nat(2),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("torn" as const), cut: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("bad" as const),
      lines: fc.nat(2),
      heal: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("file" as const) }) },
);

function eventOf(which: number, ref: number): AuditEvent {
  const outcome = [{ outcome: "allowed" as const }, { outcome: "ask" as const }, {
    outcome: "denied" as const,
    reason: "no_grant",
  }][ref % 3];
  switch (which) {
    case 0:
    case 1:
      return {
        type: "decision",
        session: "s",
        call: `c\\"${ref}`,
        tool: "t",
        arguments: "{}",
        outcome,
        grant: null,
        grant_sha256: null,
        taint: "public",
        untrusted: false,
      };
    case 2:
    case 3:
      return {
        type: "approval",
        session: "s",
        call: "c",
        decision: ref,
        answer: (["approved", "refused", "expired"] as const)[ref % 3],
        by: "owner",
        reason: null,
        outcome,
        grant: null,
        grant_sha256: null,
        taint: "private",
        untrusted: true,
      };
    case 4:
    case 5:
      return {
        type: "result",
        session: "s",
        call: "c",
        decision: ref,
        status: "result",
        class: "secret",
        untrusted: false,
        truncated: true,
        bytes: 1,
        sha256: "a".repeat(64),
        taint_after: "secret",
      };
    case 6:
      return { type: "task_started", task: "t", worker: "w", tools: ["x"], budget_cents: null };
    case 7:
      return { type: "task_ended", task: "t", state: "done", reason: null };
    case 8:
      return { type: "vault_set", name: "KËY" };
    default:
      return { type: "cost", task: "t", cents: ref, what: "usage" };
  }
}

/** A log made of the steps, as lines per file. */
function build(steps: Step[], cutLast: boolean): Uint8Array[] {
  const files: string[][] = [[]];
  let prev = "0".repeat(64);
  let seq = 0;
  const add = (line: string): string => {
    files[files.length - 1].push(line);
    return sha256Hex(encoder.encode(line));
  };
  for (const s of steps) {
    if (s.kind === "event") {
      const ref = seq === 0 ? 0 : s.ref % seq;
      prev = add(recordLine({ seq, time: TIMES[s.time], prev, event: eventOf(s.which, ref) }));
      seq++;
    } else if (s.kind === "torn") {
      const whole = recordLine({ seq, time: TIMES[0], prev, event: eventOf(9, 1) });
      const torn = whole.slice(0, 1 + (s.cut % (whole.length - 1)));
      add(torn);
      const event: AuditEvent = {
        type: "recovery",
        torn_bytes: encoder.encode(torn).length,
        torn_sha256: sha256Hex(encoder.encode(torn)),
      };
      prev = add(recordLine({ seq, time: TIMES[0], prev, event }));
      seq++;
    } else if (s.kind === "bad") {
      const lastGood = prev;
      const file = NAMES[files.length - 1];
      const at = files[files.length - 1].length + 1;
      let last = add(recordLine({ seq: seq + 7, time: TIMES[0], prev, event: eventOf(8, 0) }));
      for (let i = 0; i < s.lines; i++) {
        last = add(
          recordLine({ seq: seq + 1 + i, time: TIMES[0], prev: last, event: eventOf(9, i) }),
        );
      }
      if (s.heal) {
        const breakSeq = seq + 1 + s.lines;
        const event: AuditEvent = { type: "accepted_break", file, line: at, last_good: lastGood };
        prev = add(recordLine({ seq: breakSeq, time: TIMES[1], prev: last, event }));
        seq = breakSeq + 1;
      }
    } else if (files.length < NAMES.length) {
      files.push([]);
    }
  }
  const contents = files.map((lines) => encoder.encode(lines.map((line) => `${line}\n`).join("")));
  const last = contents.length - 1;
  if (cutLast && contents[last].length > 0) contents[last] = contents[last].subarray(0, -1);
  return contents;
}

Deno.test("property: the compact path reports as ChainVerifier.feed over every state of the machine", async () => {
  const hasher = await localHasher();
  await fc.assert(
    fc.asyncProperty(
      fc.array(step, { maxLength: 40 }),
      fc.boolean(),
      fc.integer({ min: 1, max: 2000 }),
      async (steps, cutLast, chunkBytes) => {
        const files = build(steps, cutLast);
        const verifier = new ChainVerifier();
        files.forEach((content, i) => verifier.feed(NAMES[i], content));
        const machine = new ChainMachine();
        for (let i = 0; i < files.length; i++) {
          const chunks = hasher.hashFile(files[i], { chunkBytes });
          await feedFile(machine, { name: NAMES[i], chunks });
        }
        assertEquals(machine.finish(), verifier.finish());
      },
    ),
    { numRuns: 500 },
  );
});

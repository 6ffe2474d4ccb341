/** The pure chain verifier: recoveries, unfinished and abandoned calls, resume, and a property. */
import fc from "fast-check";
import {
  type AuditEvent,
  ChainVerifier,
  recordLine,
  sha256Hex,
  ZERO_HASH,
} from "../../mod/audit/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { DAY1, DAY2, lineHash, makeHome, sampleEvent, standardLog } from "./helpers.ts";

const encoder = new TextEncoder();

/** Builds chained lines from events, as the writer would, starting at seq 0. */
class LogBuilder {
  lines: string[] = [];
  seq = 0;
  prev = ZERO_HASH;

  add(event: AuditEvent, time = "2026-11-29T10:00:00.000Z"): number {
    const line = recordLine({ seq: this.seq, time, prev: this.prev, event });
    this.lines.push(line);
    this.prev = lineHash(line);
    return this.seq++;
  }

  /** Adds raw text as a line that is not a record (a torn line ended by a newline). */
  raw(text: string): void {
    this.lines.push(text);
  }

  /** A Recovery for the last line, chained from the line before it, as startup writes it. */
  recover(prevOfTorn: string, seqOfTorn: number): void {
    const torn = encoder.encode(this.lines[this.lines.length - 1]);
    const line = recordLine({
      seq: seqOfTorn,
      time: "2026-11-29T10:00:01.000Z",
      prev: prevOfTorn,
      event: { type: "recovery", torn_bytes: torn.length, torn_sha256: sha256Hex(torn) },
    });
    this.lines.push(line);
    this.prev = lineHash(line);
    this.seq = seqOfTorn + 1;
  }

  /** Parses line `index` as a record, lets `change` edit it, and writes it back. */
  // deno-lint-ignore no-explicit-any
  edit(index: number, change: (record: any) => void): void {
    const record = JSON.parse(this.lines[index]);
    change(record);
    this.lines[index] = recordLine(record);
  }

  text(): Uint8Array {
    return encoder.encode(this.lines.map((line) => `${line}\n`).join(""));
  }

  /** A log of one record, then a torn line (seq 1) and the Recovery that describes it. */
  static recovered(): LogBuilder {
    const log = new LogBuilder();
    log.add(sampleEvent(0));
    const [prev, seq] = [log.prev, log.seq];
    log.raw('{"seq":1,"time":"2026');
    log.recover(prev, seq);
    return log;
  }
}

function verify(content: Uint8Array, name = DAY2): ReturnType<ChainVerifier["finish"]> {
  const verifier = new ChainVerifier();
  verifier.feed(name, content);
  return verifier.finish();
}

function decision(outcome: "allowed" | "ask", call: string): AuditEvent {
  return { ...sampleEvent(0), call, outcome: { outcome } } as AuditEvent;
}

Deno.test("a Recovery whose hash does not match the line before it is a failure", () => {
  const log = LogBuilder.recovered();
  log.edit(2, (record) => {
    record.event.torn_sha256 = "3".repeat(64);
  });
  const report = verify(log.text());
  assertEquals([report.failure?.line, report.recoveries], [2, []]);
});

Deno.test("a Recovery whose length does not match the line before it is a failure", () => {
  const log = LogBuilder.recovered();
  log.edit(2, (record) => {
    record.event.torn_bytes += 1;
  });
  assertEquals(verify(log.text()).failure?.line, 2);
});

Deno.test("a Recovery that describes no line is a failure at the Recovery record", () => {
  const log = new LogBuilder();
  log.add(sampleEvent(0));
  log.add({ type: "recovery", torn_bytes: 12, torn_sha256: "4".repeat(64) });
  log.add(sampleEvent(1));
  const failure = verify(log.text()).failure;
  assertEquals(failure?.line, 2);
  assertStringIncludes(failure?.what ?? "", "describes no torn line");
});

Deno.test("a line no Recovery describes, followed by a torn Recovery, is a failure at that line", () => {
  const log = LogBuilder.recovered();
  const content = log.text();
  // The Recovery itself was torn: its last 20 bytes and its newline never reached the disk.
  const report = verify(content.subarray(0, content.length - 21));
  assertEquals(report.failure?.line, 2);
  assertEquals(report.torn_tail, null);
});

Deno.test("a recovered line is not a record: its seq is reused and it is listed in recoveries", () => {
  const log = LogBuilder.recovered();
  log.add(sampleEvent(1));
  const report = verify(log.text());
  assertEquals(report.failure, null);
  assertEquals([report.records, report.next_seq], [3, 3]);
  assertEquals(report.recoveries, [{ file: DAY2, line: 2 }]);
});

Deno.test("an allowed Decision with no Result is unfinished, an Ask with no Approval abandoned, neither a failure", () => {
  const log = new LogBuilder();
  const allowedNoResult = log.add(decision("allowed", "a"));
  const askNoApproval = log.add(decision("ask", "b"));
  const askApproved = log.add(decision("ask", "c"));
  log.add({
    type: "approval",
    session: "task-1",
    call: "c",
    decision: askApproved,
    answer: "approved",
    by: "owner",
    reason: null,
    outcome: { outcome: "allowed" },
    grant: "g",
    grant_sha256: null,
    taint: "private",
    untrusted: false,
  });
  const askRefused = log.add(decision("ask", "d"));
  log.add({
    type: "approval",
    session: "task-1",
    call: "d",
    decision: askRefused,
    answer: "refused",
    by: "owner",
    reason: "no",
    outcome: { outcome: "denied", reason: "approval_refused" },
    grant: null,
    grant_sha256: null,
    taint: "private",
    untrusted: false,
  });
  const allowedDone = log.add(decision("allowed", "e"));
  log.add({ ...sampleEvent(1), call: "e", decision: allowedDone } as AuditEvent);
  const report = verify(log.text());
  assertEquals(report.failure, null);
  assertEquals(report.abandoned, [askNoApproval]);
  assertEquals(report.unfinished, [allowedNoResult, askApproved]);
});

Deno.test("feed is the same as file and line, and resume continues from a known point", () => {
  const log = new LogBuilder();
  for (let i = 0; i < 6; i++) log.add(sampleEvent(i));
  const byLine = new ChainVerifier();
  byLine.file(DAY2);
  for (const line of log.lines) byLine.line(encoder.encode(line), true);
  assertEquals(byLine.finish(), verify(log.text()));
  const resumed = ChainVerifier.resume(3, lineHash(log.lines[2]));
  resumed.feed(DAY2, encoder.encode(log.lines.slice(3).map((line) => `${line}\n`).join("")));
  const report = resumed.finish();
  assertEquals([report.failure, report.records, report.head], [null, 3, log.prev]);
  const wrong = ChainVerifier.resume(3, ZERO_HASH);
  wrong.feed(DAY2, encoder.encode(`${log.lines[3]}\n`));
  assertEquals(wrong.finish().failure?.line, 1);
});

Deno.test("a line without its newline before the log's last line is a failure", () => {
  const log = new LogBuilder();
  log.add(sampleEvent(0));
  log.add(sampleEvent(1));
  const verifier = new ChainVerifier();
  verifier.feed(DAY1, encoder.encode(log.lines[0]));
  verifier.feed(DAY2, encoder.encode(`${log.lines[1]}\n`));
  const failure = verifier.finish().failure;
  assertEquals([failure?.file, failure?.line], [DAY1, 1]);
  assertStringIncludes(failure?.what ?? "", "no newline");
});

Deno.test("property: any change to any byte of any line but the last is reported at that line or the next", async () => {
  const home = await makeHome();
  let files: { name: string; bytes: Uint8Array }[];
  try {
    await standardLog(home);
    files = await Promise.all(
      [DAY1, DAY2].map(async (name) => ({
        name,
        bytes: await Deno.readFile(`${home}/audit/${name}`),
      })),
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
  // Every byte position but those of the log's last line (a torn final line is not a failure,
  // and a last line rewritten whole is what checkpoints are for), and but the newline that ends
  // the line before it: changing that byte merges the two into one unparseable final line, which
  // is then, by the seed's rule, a torn final line.
  const positions: { file: number; offset: number; line: number }[] = [];
  files.forEach((file, index) => {
    let line = 1;
    const lastStart = file.bytes.lastIndexOf(10, file.bytes.length - 2) + 1;
    for (let offset = 0; offset < file.bytes.length; offset++) {
      if (index === files.length - 1 && offset >= lastStart - 1) break;
      positions.push({ file: index, offset, line });
      if (file.bytes[offset] === 10) line++;
    }
  });
  fc.assert(
    fc.property(
      fc.nat({ max: positions.length - 1 }),
      fc.integer({ min: 1, max: 255 }),
      (pick, delta) => {
        const at = positions[pick];
        const damaged = files.map((file) => file.bytes.slice());
        const bytes = damaged[at.file];
        bytes[at.offset] = (bytes[at.offset] + delta) % 256;
        const verifier = new ChainVerifier();
        damaged.forEach((content, i) => verifier.feed(files[i].name, content));
        const failure = verifier.finish().failure;
        assert(failure !== null, `a change at ${files[at.file].name}:${at.line} was not reported`);
        const name = files[at.file].name;
        const lines = files[at.file].bytes.filter((byte) => byte === 10).length;
        const next = at.line < lines
          ? { file: name, line: at.line + 1 }
          : { file: files[at.file + 1].name, line: 1 };
        const where = { file: failure.file, line: failure.line };
        assert(
          (where.file === name && where.line === at.line) ||
            (where.file === next.file && where.line === next.line),
          `a change at ${name}:${at.line} was reported at ${where.file}:${where.line}`,
        );
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("the verifier is pure: it runs in a Worker with no permission at all", async () => {
  const log = new LogBuilder();
  for (let i = 0; i < 4; i++) log.add(sampleEvent(i));
  const worker = new Worker(new URL("./pure_worker.ts", import.meta.url), {
    type: "module",
    deno: { permissions: "none" },
  });
  try {
    const answer = new Promise<{ records: number; failure: unknown }>((resolve, reject) => {
      worker.onmessage = (event) => resolve(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(event.message));
      };
    });
    worker.postMessage({ name: DAY2, content: log.text() });
    assertEquals(await answer, { records: 4, failure: null });
  } finally {
    worker.terminate();
  }
});

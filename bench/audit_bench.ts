/**
 * The audit log's three figures (issue 3), each against a baseline measured in this run:
 * appends/s with one writer against a plain write+fdatasync loop of the same lines; appends/s
 * with 32 concurrent callers against the one-writer figure; `gurt audit verify` on a
 * 200,000-record log against `sha256sum` on the same files.
 */
import { gurtInvocation } from "../mod/core/self_command.ts";
import {
  type AuditEvent,
  type AuditRecord,
  AuditWriter,
  realFileOps,
  recordLine,
  sha256Hex,
  verifyHome,
} from "../mod/audit/mod.ts";
import { printTable } from "./table.ts";

const ONE_WRITER_APPENDS = 2000;
const BLOCK = 50;
const CONCURRENT_CALLERS = 32;
const CONCURRENT_APPENDS = 6400;
const VERIFY_RECORDS = 200_000;
const ROUNDS = 3;

function event(i: number): AuditEvent {
  const hash = (i * 2654435761 >>> 0).toString(16).padStart(8, "0").repeat(8);
  switch (i % 4) {
    case 0:
      return {
        type: "decision",
        session: "task-20261129-1",
        call: `call-${i}`,
        tool: "read_file",
        arguments: JSON.stringify({ path: `/home/kyle/notes/${i}.md` }),
        outcome: { outcome: "allowed" },
        grant: "notes-read",
        grant_sha256: hash,
        taint: "private",
        untrusted: false,
      };
    case 1:
      return {
        type: "result",
        session: "task-20261129-1",
        call: `call-${i - 1}`,
        decision: i - 1,
        status: "result",
        class: "private",
        untrusted: false,
        truncated: false,
        bytes: 1000 + i,
        sha256: hash,
        taint_after: "private",
      };
    case 2:
      return { type: "cost", task: "task-20261129-1", cents: 3, what: "usage" };
    default:
      return { type: "vault_set", name: `KEY_${i}` };
  }
}

async function tempHome(): Promise<string> {
  return await Deno.makeTempDir({ prefix: "gurt-audit-bench-" });
}

/**
 * Appends/s of one caller awaiting each append, and lines/s of a plain loop (write, fdatasync)
 * writing the same lines to its own 0600 file. The two take turns in blocks of BLOCK, so that
 * both meet the same disk and the same load from other processes; each sums its own time.
 */
async function oneWriterAgainstPlainLoop(): Promise<{ writer: number; plain: number }> {
  const home = await tempHome();
  try {
    const { writer } = await AuditWriter.open(home);
    const plain = await Deno.open(`${home}/plain.jsonl`, {
      createNew: true,
      append: true,
      mode: 0o600,
    });
    const encoder = new TextEncoder();
    let writerMs = 0;
    let plainMs = 0;
    const lines: Uint8Array[] = [];
    const writeBlock = async (base: number): Promise<void> => {
      const records: AuditRecord[] = [];
      const start = performance.now();
      for (let i = base; i < base + BLOCK; i++) records.push(await writer.append(event(i)));
      writerMs += performance.now() - start;
      records.forEach((record, i) => (lines[base + i] = encoder.encode(`${recordLine(record)}\n`)));
    };
    const plainBlock = async (base: number): Promise<void> => {
      const start = performance.now();
      for (let i = base; i < base + BLOCK; i++) {
        await realFileOps.write(plain, lines[i]);
        await plain.syncData();
      }
      plainMs += performance.now() - start;
    };
    // The plain loop needs the writer's lines, so its first block waits for the writer's; after
    // that the two go first by turns, so neither always runs right after the other.
    await writeBlock(0);
    for (let base = 0; base < ONE_WRITER_APPENDS; base += BLOCK) {
      const next = base + BLOCK;
      if ((base / BLOCK) % 2 === 0 || next >= ONE_WRITER_APPENDS) {
        await plainBlock(base);
        if (next < ONE_WRITER_APPENDS) await writeBlock(next);
      } else {
        if (next < ONE_WRITER_APPENDS) await writeBlock(next);
        await plainBlock(base);
      }
    }
    writer.close();
    plain.close();
    return {
      writer: ONE_WRITER_APPENDS / (writerMs / 1000),
      plain: ONE_WRITER_APPENDS / (plainMs / 1000),
    };
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** Appends/s with 32 callers, each awaiting its own appends one after another. */
async function concurrent(): Promise<number> {
  const home = await tempHome();
  try {
    const { writer } = await AuditWriter.open(home);
    const each = CONCURRENT_APPENDS / CONCURRENT_CALLERS;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENT_CALLERS }, async (_, caller) => {
        for (let i = 0; i < each; i++) await writer.append(event(caller * each + i));
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    writer.close();
    return CONCURRENT_APPENDS / seconds;
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

/** Writes a log of VERIFY_RECORDS records over three days, with many callers in flight. */
async function bigLog(home: string): Promise<{ files: string[]; bytes: number }> {
  let now = Date.parse("2026-11-27T00:00:00.000Z");
  const { writer } = await AuditWriter.open(home, { clock: () => new Date(now += 1000) });
  const inFlight = 2000;
  for (let base = 0; base < VERIFY_RECORDS; base += inFlight) {
    const count = Math.min(inFlight, VERIFY_RECORDS - base);
    await Promise.all(Array.from({ length: count }, (_, i) => writer.append(event(base + i))));
  }
  writer.close();
  const files = [...Deno.readDirSync(`${home}/audit`)]
    .map((entry) => entry.name)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .map((name) => `${home}/audit/${name}`);
  let bytes = 0;
  for (const file of files) bytes += Deno.statSync(file).size;
  return { files, bytes };
}

/** Seconds to read the files and hash each line alone: the floor of any verifier here. */
async function hashEachLine(files: string[]): Promise<number> {
  const start = performance.now();
  for (const file of files) {
    const content = await Deno.readFile(file);
    let from = 0;
    for (let end = content.indexOf(10); end !== -1; end = content.indexOf(10, from)) {
      sha256Hex(content.subarray(from, end));
      from = end + 1;
    }
  }
  return (performance.now() - start) / 1000;
}

/** Seconds a command takes from spawn to exit; it must succeed. */
async function timed(command: string, args: string[]): Promise<number> {
  const start = performance.now();
  const output = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" })
    .output();
  const seconds = (performance.now() - start) / 1000;
  if (!output.success) {
    throw new Error(`${command} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  return seconds;
}

function best(values: number[], higherIsBetter: boolean): number {
  return higherIsBetter ? Math.max(...values) : Math.min(...values);
}

const writerRuns: number[] = [];
const plainRuns: number[] = [];
const concurrentRuns: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const one = await oneWriterAgainstPlainLoop();
  writerRuns.push(one.writer);
  plainRuns.push(one.plain);
  concurrentRuns.push(await concurrent());
}
// The one-writer row compares the round with the median writer figure with its own baseline.
const order = writerRuns.map((_, i) => i).sort((a, b) => writerRuns[a] - writerRuns[b]);
const middle = order[Math.floor(order.length / 2)];
const oneFigure = writerRuns[middle];

const home = await tempHome();
const verifySeconds: number[] = [];
const inProcessSeconds: number[] = [];
const hashOnlySeconds: number[] = [];
const shaSeconds: number[] = [];
let logBytes = 0;
try {
  const log = await bigLog(home);
  logBytes = log.bytes;
  // As the installed launcher runs it.
  const verify = gurtInvocation(["--home", home, "audit", "verify"]);
  for (let round = 0; round < ROUNDS; round++) {
    shaSeconds.push(await timed("sha256sum", log.files));
    verifySeconds.push(await timed(verify.program, verify.args));
    const start = performance.now();
    const report = await verifyHome(home);
    inProcessSeconds.push((performance.now() - start) / 1000);
    if (report.failure !== null || report.records !== VERIFY_RECORDS) {
      throw new Error("the benchmark log does not verify");
    }
    hashOnlySeconds.push(await hashEachLine(log.files));
  }
} finally {
  await Deno.remove(home, { recursive: true });
}
const mb = logBytes / 1e6;
console.log(
  `one writer: ${ONE_WRITER_APPENDS} appends in turns of ${BLOCK} with the plain loop, median of ${ROUNDS}; 32 callers: ` +
    `${CONCURRENT_APPENDS} appends, best of ${ROUNDS}; verify: ${VERIFY_RECORDS} records, ${
      mb.toFixed(1)
    } MB ` +
    `in 3 files, wall time of the whole process (deno start included), best of ${ROUNDS}\n`,
);
printTable([
  {
    what: "appends/s, one writer (append + fdatasync)",
    unit: "/s",
    value: oneFigure,
    baselineWhat: "plain loop: write + fdatasync per line, same lines and calls",
    baseline: plainRuns[middle],
    target: ">= 0.8",
  },
  {
    what: `appends/s, ${CONCURRENT_CALLERS} concurrent callers (group commit)`,
    unit: "/s",
    value: best(concurrentRuns, true),
    baselineWhat: "one writer, above",
    baseline: oneFigure,
    target: ">= 4",
  },
  {
    what: "gurt audit verify, 200,000 records",
    unit: "MB/s",
    value: mb / best(verifySeconds, false),
    baselineWhat: "sha256sum on the same files",
    baseline: mb / best(shaSeconds, false),
    target: ">= 0.5",
  },
  {
    what: "verifyHome in this process (no process start), 200,000 records",
    unit: "MB/s",
    value: mb / best(inProcessSeconds, false),
    baselineWhat: "sha256sum on the same files",
    baseline: mb / best(shaSeconds, false),
    target: ">= 0.5",
  },
  {
    what: "only a node:crypto sha256 of each line, in this process (no parsing)",
    unit: "MB/s",
    value: mb / best(hashOnlySeconds, false),
    baselineWhat: "sha256sum on the same files",
    baseline: mb / best(shaSeconds, false),
    target: ">= 0.5",
  },
]);

/**
 * verifyHome's way of feeding files (file_feed.ts: chunks decoded once, hashes from a hasher,
 * zod only for lines the hand check refuses) reports exactly what a ChainVerifier fed the same
 * files reports, for any log, damaged or not: bytes changed to anything (newlines, quotes,
 * backslashes, bytes that are not UTF-8), byte order marks at a line's start, a last newline cut,
 * any chunk size; with the hasher in this thread and with the hasher Worker.
 */
import fc from "fast-check";
import {
  ChainMachine,
  type ChainReport,
  ChainVerifier,
  type Checkpoint,
  feedFile,
  type LineHasher,
  localHasher,
  portHasher,
  sha256Hex,
  startHasher,
  verifyHome,
} from "../../mod/audit/mod.ts";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  assertVerifiesAsChainVerifier,
  type AuditFile,
  chainedLog,
  changeBytes,
  THREE_DAYS,
  withHome,
} from "./helpers.ts";

const NAMES = THREE_DAYS;
const BOM = [0xef, 0xbb, 0xbf];

function sequential(files: AuditFile[], checkpoints: Checkpoint[]): ChainReport {
  const verifier = new ChainVerifier({ checkpoints });
  for (const file of files) verifier.feed(file.name, file.content);
  return verifier.finish();
}

async function chunked(
  files: AuditFile[],
  checkpoints: Checkpoint[],
  options: { chunkBytes: number; hasher: LineHasher },
): Promise<ChainReport> {
  const machine = new ChainMachine({ checkpoints });
  // Every file is handed to the hasher before the first is fed, as verifyHome hands the next one.
  const streams = files.map((file) => ({
    name: file.name,
    chunks: options.hasher.hashFile(file.content.slice(), { chunkBytes: options.chunkBytes }),
  }));
  for (const stream of streams) await feedFile(machine, stream);
  return machine.finish();
}

/** A byte change: anywhere, to a byte that matters to a parser or to UTF-8, or to any byte. */
const change = fc.record({
  file: fc.nat(),
  at: fc.nat(),
  byte: fc.oneof(
    fc.constantFrom(0x0a, 0x22, 0x5c, 0x7b, 0x7d, 0x2c, 0x30, 0x39, 0x20, 0x00),
    fc.constantFrom(0x80, 0xbf, 0xc3, 0xe9, 0xef, 0xbb, 0xf0, 0xff),
    fc.integer({ min: 0, max: 255 }),
  ),
});

/** A damaged copy of the log: changed bytes, a BOM put before a line, the last newline cut. */
function damage(
  files: AuditFile[],
  damages: { changes: { file: number; at: number; byte: number }[]; bom: number | null },
  cutNewline: boolean,
): AuditFile[] {
  const out = files.map((file) => ({ name: file.name, content: file.content.slice() }));
  changeBytes(out.map((file) => file.content), damages.changes);
  if (damages.bom !== null) {
    const file = out[damages.bom % out.length];
    const starts = [0];
    file.content.forEach((byte, i) => byte === 10 && starts.push(i + 1));
    const at = starts[damages.bom % starts.length];
    const content = new Uint8Array(file.content.length + 3);
    content.set(file.content.subarray(0, at));
    content.set(BOM, at);
    content.set(file.content.subarray(at), at + 3);
    file.content = content;
  }
  const last = out[out.length - 1];
  if (cutNewline && last.content.length > 0) last.content = last.content.subarray(0, -1);
  return out;
}

const damages = fc.record({
  changes: fc.array(change, { maxLength: 3 }),
  bom: fc.option(fc.nat()),
});

Deno.test("property: feeding files in chunks reports exactly as ChainVerifier.feed, damaged or not", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: 14 }),
      fc.integer({ min: 1, max: 3 }),
      fc.array(fc.constantFrom("KEY", "KËY", "鍵", "🔑", "K\u007fY", "\ufeffK"), {
        minLength: 1,
        maxLength: 3,
      }),
      damages,
      fc.boolean(),
      fc.integer({ min: 1, max: 700 }),
      async (count, fileCount, names, damage_, cutNewline, chunkBytes) => {
        const clean = chainedLog(count, fileCount, names);
        const files = damage(clean, damage_, cutNewline);
        // A checkpoint on a line of the clean log: kept or missing, as the damage decides.
        const checkpoints: Checkpoint[] = count === 0 ? [] : [{
          seq: 0,
          file: clean[0].name,
          sha256: sha256Hex(clean[0].content.subarray(0, clean[0].content.indexOf(10))),
        }];
        const hasher = await localHasher();
        assertEquals(
          await chunked(files, checkpoints, { chunkBytes, hasher }),
          sequential(files, checkpoints),
        );
      },
    ),
    { numRuns: 400 },
  );
});

Deno.test("property: chunks hashed by the hasher Worker report exactly as ChainVerifier.feed", async () => {
  const worker = startHasher();
  try {
    const hasher = portHasher(worker.port);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 14 }),
        fc.integer({ min: 1, max: 3 }),
        damages,
        fc.boolean(),
        fc.integer({ min: 1, max: 700 }),
        async (count, fileCount, damage_, cutNewline, chunkBytes) => {
          const files = damage(chainedLog(count, fileCount, ["KEY", "KËY"]), damage_, cutNewline);
          assertEquals(
            await chunked(files, [], { chunkBytes, hasher }),
            sequential(files, []),
          );
        },
      ),
      { numRuns: 150 },
    );
  } finally {
    worker.port.close();
    worker.worker.terminate();
  }
});

async function writeHome(home: string, files: AuditFile[]): Promise<void> {
  await Deno.mkdir(`${home}/audit`, { recursive: true });
  for (const file of files) await Deno.writeFile(`${home}/audit/${file.name}`, file.content);
}

Deno.test("property: verifyHome with the hasher Worker reports as ChainVerifier, damaged or not", async () => {
  const hasher = startHasher();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 3 }),
        damages,
        fc.boolean(),
        async (count, fileCount, damage_, cutNewline) => {
          const files = damage(chainedLog(count, fileCount, ["KEY", "KËY"]), damage_, cutNewline);
          await assertVerifiesAsChainVerifier(files.map((file) => file.content), {
            hasher: hasher.port,
          });
        },
      ),
      { numRuns: 40 },
    );
  } finally {
    hasher.port.close();
    hasher.worker.terminate();
  }
});

Deno.test("a line that is not UTF-8 is reported at its own line, by verifyHome with the hasher Worker", async () => {
  const files = chainedLog(6, 1, ["KËY"]);
  const content = files[0].content;
  // The third line's first byte after `{"seq":2,"time":"` becomes 0xff, which UTF-8 never uses.
  let third = 0;
  for (let n = 0; n < 2; n++) third = content.indexOf(10, third) + 1;
  content[third + 17] = 0xff;
  const hasher = startHasher();
  try {
    await withHome(async (home) => {
      await writeHome(home, files);
      const report = await verifyHome(home, { hasher: hasher.port });
      assert(report.failure !== null, "the damaged log verified");
      assertEquals([report.failure.file, report.failure.line], [NAMES[0], 3]);
      assertStringIncludes(report.failure.what, "not a JSON text in UTF-8");
      assertEquals(report.records, 2);
    });
  } finally {
    hasher.port.close();
    hasher.worker.terminate();
  }
});

Deno.test("a byte order mark at a line's start is read as a verifier reading that line alone reads it", async () => {
  const files = chainedLog(4, 1, ["KEY"]);
  const content = files[0].content;
  const second = content.indexOf(10) + 1;
  const marked = new Uint8Array(content.length + 3);
  marked.set(content.subarray(0, second));
  marked.set(BOM, second);
  marked.set(content.subarray(second), second + 3);
  const damaged = [{ name: files[0].name, content: marked }];
  const report = await chunked(damaged, [], { chunkBytes: 1 << 20, hasher: await localHasher() });
  assertEquals(report, sequential(damaged, []));
  // The mark is dropped before parsing, so line 2 is a record; its hash covers the mark, so the
  // line after it does not chain.
  assert(report.failure !== null, "the marked log verified");
  assertEquals(report.failure.line, 3);
});

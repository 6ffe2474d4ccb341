/**
 * verifyHome reads each file a piece at a time and hands the hasher each run of whole lines as it
 * is read (files.ts readSharedLines): the runs are the whole file, in shared memory, each ending
 * at a newline but the last; and verifyHome reads pieces of any size to the report a ChainVerifier
 * fed the whole files gives, damaged or not.
 */
import fc from "fast-check";
import { readSharedLines, startHasher } from "../../mod/audit/mod.ts";
import { assert, assertEquals } from "../assert.ts";
import {
  assertVerifiesAsChainVerifier,
  byteChanges,
  chainedLog,
  changeBytes,
  withHome,
} from "./helpers.ts";

const encoder = new TextEncoder();

Deno.test("property: readSharedLines gives the whole file in runs of whole lines, at any piece size", async () => {
  await withHome(async (home) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constant(10), fc.integer({ min: 0, max: 255 })), { maxLength: 3000 }),
        fc.integer({ min: 1, max: 700 }),
        async (bytes, pieceBytes) => {
          const path = `${home}/file`;
          const content = Uint8Array.from(bytes);
          await Deno.writeFile(path, content);
          const runs: Uint8Array[] = [];
          await readSharedLines(path, (lines) => runs.push(lines.slice()), { pieceBytes });
          runs.forEach((run, i) => {
            assert(run.length > 0, "an empty run");
            assert(i === runs.length - 1 || run[run.length - 1] === 10, "a run ends mid-line");
          });
          const whole = new Uint8Array(runs.reduce((sum, run) => sum + run.length, 0));
          let at = 0;
          for (const run of runs) {
            whole.set(run, at);
            at += run.length;
          }
          assertEquals(whole, content);
        },
      ),
      { numRuns: 300 },
    );
    let shared = true;
    await Deno.writeFile(`${home}/file`, encoder.encode("a\nb\n"));
    await readSharedLines(`${home}/file`, (lines) => {
      shared &&= lines.buffer instanceof SharedArrayBuffer;
    });
    assert(shared, "a run not in shared memory");
  });
});

Deno.test("property: verifyHome reading small pieces reports as ChainVerifier, damaged or not", async () => {
  const hasher = startHasher();
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 3 }),
        byteChanges,
        fc.boolean(),
        fc.integer({ min: 1, max: 2000 }),
        async (count, fileCount, changes, cutNewline, pieceBytes) => {
          const files = chainedLog(count, fileCount).map((file) => file.content);
          changeBytes(files, changes);
          const last = files.length - 1;
          if (cutNewline && files[last].length > 0) files[last] = files[last].subarray(0, -1);
          await assertVerifiesAsChainVerifier(files, { hasher: hasher.port, pieceBytes });
        },
      ),
      { numRuns: 60 },
    );
  } finally {
    hasher.port.close();
    hasher.worker.terminate();
  }
});

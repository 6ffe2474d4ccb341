/**
 * The hasher Worker without libcrypto (startHasher with no library: no permission at all, and
 * node:crypto) gives verifyHome the same report as ChainVerifier.feed, as the Worker with it does
 * (tests/audit/file_feed_test.ts), for any log, damaged or not.
 */
import fc from "fast-check";
import { startHasher } from "../../mod/audit/mod.ts";
import { assertVerifiesAsChainVerifier, byteChanges, chainedLog, changeBytes } from "./helpers.ts";

Deno.test("property: verifyHome with the hasher Worker on node:crypto reports as ChainVerifier", async () => {
  const hasher = startHasher({ library: null });
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 3 }),
        byteChanges,
        async (count, fileCount, changes) => {
          const files = chainedLog(count, fileCount).map((file) => file.content);
          changeBytes(files, changes);
          await assertVerifiesAsChainVerifier(files, { hasher: hasher.port });
        },
      ),
      { numRuns: 40 },
    );
  } finally {
    hasher.port.close();
    hasher.worker.terminate();
  }
});

/**
 * The hasher Worker without libcrypto (startHasher with no library: no permission at all, and
 * node:crypto) gives verifyHome the same report as ChainVerifier.feed, as the Worker with it does
 * (tests/audit/file_feed_test.ts), for any log, damaged or not.
 */
import fc from "fast-check";
import { ChainVerifier, startHasher, verifyHome } from "../../mod/audit/mod.ts";
import { assertEquals } from "../assert.ts";
import { chainedLog, THREE_DAYS, withHome } from "./helpers.ts";

const NAMES = THREE_DAYS;

Deno.test("property: verifyHome with the hasher Worker on node:crypto reports as ChainVerifier", async () => {
  const hasher = startHasher({ library: null });
  try {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(
          fc.record({ file: fc.nat(), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
          {
            maxLength: 3,
          },
        ),
        async (count, fileCount, changes) => {
          const files = chainedLog(count, fileCount).map((file) => file.content);
          for (const c of changes) {
            const content = files[c.file % files.length];
            if (content.length > 0) content[c.at % content.length] = c.byte;
          }
          const verifier = new ChainVerifier();
          files.forEach((content, i) => verifier.feed(NAMES[i], content));
          await withHome(async (home) => {
            await Deno.mkdir(`${home}/audit`);
            for (let i = 0; i < files.length; i++) {
              await Deno.writeFile(`${home}/audit/${NAMES[i]}`, files[i]);
            }
            const { dir: _dir, checkpoint: _checkpoint, ...chain } = await verifyHome(home, {
              hasher: hasher.port,
            });
            assertEquals(chain, verifier.finish());
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

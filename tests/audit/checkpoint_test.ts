/** Checkpoints: a log truncated and rebuilt with correct hashes passes the chain, not the checkpoint. */
import {
  AuditWriter,
  CheckpointFileError,
  checkpointOf,
  parseCheckpoints,
  verifyHome,
  verifyLines,
} from "../../mod/audit/mod.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { DAY2, makeHome, readLines, standardLog, steppingClock, writeLines } from "./helpers.ts";
import { sampleEvent } from "./helpers.ts";

Deno.test("a log truncated and rebuilt with correct hashes verifies without --checkpoint and fails with it", async () => {
  const home = await makeHome();
  try {
    await standardLog(home);
    const kept = checkpointOf(await verifyHome(home));
    assert(kept !== null);
    assertEquals(kept.split(" ").slice(0, 2), ["12", DAY2]);
    const checkpointFile = `${home}/kept-off-the-box.txt`;
    await Deno.writeTextFile(checkpointFile, `${kept}\n`);
    assertEquals((await verifyHome(home, { checkpoint: checkpointFile })).checkpoints_missing, []);

    // Someone with root cuts DAY2 after line 3 and writes new records with every prev right.
    await writeLines(home, DAY2, (await readLines(home, DAY2)).slice(0, 3));
    const { writer } = await AuditWriter.open(home, {
      clock: steppingClock("2026-11-29T00:10:00.000Z"),
    });
    for (let i = 0; i < 5; i++) await writer.append(sampleEvent(40 + i));
    writer.close();

    const plain = await verifyHome(home);
    assertEquals([plain.failure, plain.records], [null, 13]);
    const checked = await verifyHome(home, { checkpoint: checkpointFile });
    assertEquals(checked.failure, null);
    assertEquals(checked.checkpoints_missing.length, 1);
    const { lines, status } = verifyLines(checked);
    assertEquals(status, 1);
    assertStringIncludes(lines[0], `checkpoint "${kept}" from ${checkpointFile}`);
    assert(lines[0].endsWith("see runbook.md#audit-checkpoint-missing"), lines[0]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("a checkpoint file with a line that is not a checkpoint is refused with its line", async () => {
  const home = await makeHome();
  try {
    await standardLog(home);
    const file = `${home}/cp.txt`;
    await Deno.writeTextFile(file, "# kept\n12 2026-11-29.jsonl nothex\n");
    await assertRejects(
      () => verifyHome(home, { checkpoint: file }),
      CheckpointFileError,
      `${file}:2`,
    );
    assertEquals(
      parseCheckpoints("# only a comment\n\n5 2026-11-29.jsonl " + "a".repeat(64), "x"),
      [
        { seq: 5, file: "2026-11-29.jsonl", sha256: "a".repeat(64) },
      ],
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

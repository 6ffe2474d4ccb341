/** `gurt audit verify` and `gurt audit checkpoint` as real processes on fixture homes. */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { AuditWriter } from "../../mod/audit/mod.ts";
import {
  DAY2,
  makeHome,
  readLines,
  sampleEvent,
  standardLog,
  steppingClock,
  writeLines,
} from "../audit/helpers.ts";
import { TAMPER_CASES } from "../audit/tampering_cases.ts";
import { FIXTURE_HOME } from "../audit/fixture_log.ts";
import { gurt } from "../kit/mod.ts";

Deno.test("gurt audit verify prints ok, the record count, the head and the open calls", async () => {
  const home = await makeHome();
  try {
    await standardLog(home);
    const { code, stdout } = await gurt(["--home", home, "audit", "verify"]);
    assertEquals(code, 0);
    const lines = stdout.trimEnd().split("\n");
    assert(/^audit: ok, 13 records, head [0-9a-f]{64}$/.test(lines[0]), lines[0]);
    // Seq 12 is an allowed decision whose Result was never written.
    assertEquals(lines.slice(1), ["call 12: running or unfinished"]);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("gurt audit verify on the checked-in fixture home prints every kind of notice", async () => {
  const { code, stdout, stderr } = await gurt(["--home", FIXTURE_HOME, "audit", "verify"]);
  assertEquals(code, 0, stderr);
  assertEquals(stdout.split("\n").slice(1), [
    "recovery at 2026-11-28.jsonl:16: a torn line, closed by the Recovery after it",
    "approval 10: abandoned, no answer recorded (its requester left, or gurt serve stopped with it open before approvals were kept across restarts)",
    "call 12: running or unfinished",
    "clock warning at 2026-11-29.jsonl:2: the time went backwards",
    "",
  ]);
  assert(/^audit: ok, 18 records, head [0-9a-f]{64}$/.test(stdout.split("\n")[0]), stdout);
});

Deno.test("gurt audit verify fails with file, line and runbook pointer for every tampering case", async () => {
  const homes = await Promise.all(TAMPER_CASES.map(() => makeHome()));
  try {
    await Promise.all(TAMPER_CASES.map(async (tamper, i) => {
      await standardLog(homes[i]);
      await tamper.damage(homes[i]);
      const { code, stdout, stderr } = await gurt(["--home", homes[i], "audit", "verify"]);
      assertEquals(code, 1, tamper.name);
      assertEquals(stdout, "");
      assertStringIncludes(
        stderr,
        `${homes[i]}/audit/${tamper.file}:${tamper.line}: ${tamper.what}`,
        tamper.name,
      );
      assert(stderr.trimEnd().endsWith("see runbook.md#audit-chain-broken"), stderr);
    }));
  } finally {
    await Promise.all(homes.map((home) => Deno.remove(home, { recursive: true })));
  }
});

Deno.test("gurt audit checkpoint prints a line that verify --checkpoint later finds gone", async () => {
  const home = await makeHome();
  try {
    await standardLog(home);
    const printed = await gurt(["--home", home, "audit", "checkpoint"]);
    assertEquals(printed.code, 0);
    assert(/^12 2026-11-29\.jsonl [0-9a-f]{64}\n$/.test(printed.stdout), printed.stdout);
    await Deno.writeTextFile(`${home}/kept.txt`, printed.stdout);
    const ok = await gurt(["--home", home, "audit", "verify", "--checkpoint", "kept.txt"], {
      cwd: home,
    });
    assertEquals(ok.code, 0, ok.stderr);
    assertStringIncludes(ok.stdout, "checkpoint: every line of");

    await writeLines(home, DAY2, (await readLines(home, DAY2)).slice(0, 3));
    const { writer } = await AuditWriter.open(home, {
      clock: steppingClock("2026-11-29T00:10:00.000Z"),
    });
    for (let i = 0; i < 5; i++) await writer.append(sampleEvent(60 + i));
    writer.close();
    assertEquals((await gurt(["--home", home, "audit", "verify"])).code, 0);
    const gone = await gurt(["--home", home, "audit", "verify", "--checkpoint", "kept.txt"], {
      cwd: home,
    });
    assertEquals(gone.code, 1);
    assertStringIncludes(gone.stderr, `checkpoint "${printed.stdout.trim()}"`);
    assertStringIncludes(gone.stderr, "see runbook.md#audit-checkpoint-missing");
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

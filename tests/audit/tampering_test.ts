/** The tampering suite: each damage is found at its file and line, by verify and by startup. */
import { AuditChainBrokenError, AuditWriter, verifyHome } from "../../mod/audit/mod.ts";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { makeHome, standardLog } from "./helpers.ts";
import { TAMPER_CASES } from "./tampering_cases.ts";

Deno.test("the undamaged standard fixture verifies: 13 records over two files", async () => {
  const home = await makeHome();
  try {
    await standardLog(home);
    const report = await verifyHome(home);
    assertEquals(report.failure, null);
    assertEquals(report.records, 13);
    assertEquals(report.next_seq, 13);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

for (const tamper of TAMPER_CASES) {
  Deno.test(`verify: ${tamper.name}`, async () => {
    const home = await makeHome();
    try {
      await standardLog(home);
      await tamper.damage(home);
      const failure = (await verifyHome(home)).failure;
      assert(failure !== null, "the damaged log must not verify");
      assertEquals([failure.file, failure.line], [tamper.file, tamper.line]);
      assertStringIncludes(failure.what, tamper.what);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  });

  Deno.test(`startup refuses to write: ${tamper.name}`, async () => {
    const home = await makeHome();
    try {
      await standardLog(home);
      await tamper.damage(home);
      const before = await Deno.readFile(`${home}/audit/${tamper.file}`);
      const error = await assertRejects(() => AuditWriter.open(home), AuditChainBrokenError);
      assertEquals([error.file, error.line], [tamper.file, tamper.line]);
      assertStringIncludes(error.message, `${tamper.file}:${tamper.line}: ${tamper.what}`);
      assert(error.message.endsWith("see runbook.md#audit-chain-broken"), error.message);
      assertEquals(await Deno.readFile(`${home}/audit/${tamper.file}`), before);
      // The lock was released: a second try fails the same way, not with "already running".
      await assertRejects(() => AuditWriter.open(home), AuditChainBrokenError);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  });
}

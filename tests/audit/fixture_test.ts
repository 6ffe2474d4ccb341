/** The checked-in fixture log is what the writer writes today, and verifies with every notice. */
import { verifyHome, verifyLines } from "../../mod/audit/mod.ts";
import { assertEquals } from "../assert.ts";
import { FIXTURE_HOME, writeFixtureLog } from "./fixture_log.ts";
import { DAY1, DAY2, makeHome } from "./helpers.ts";

Deno.test("the writer still writes the checked-in fixture log byte for byte", async () => {
  const home = await makeHome();
  try {
    await writeFixtureLog(home);
    for (const name of [DAY1, DAY2]) {
      assertEquals(
        await Deno.readFile(`${home}/audit/${name}`),
        await Deno.readFile(`${FIXTURE_HOME}/audit/${name}`),
        `${name} differs from tests/fixtures/audit/home: the record format changed`,
      );
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("the fixture log verifies and reports its recovery, open calls and clock warning", async () => {
  const { lines, status } = verifyLines(await verifyHome(FIXTURE_HOME));
  assertEquals(status, 0);
  assertEquals(lines.slice(1), [
    `recovery at ${DAY1}:16: a torn line, closed by the Recovery after it`,
    // c5 (seq 10) was asked and never answered; c7 (seq 12) was allowed and has no Result.
    "approval 10: abandoned, no answer recorded (its requester left, or gurt serve stopped with it open before approvals were kept across restarts)",
    "call 12: running or unfinished",
    `clock warning at ${DAY2}:2: the time went backwards`,
  ]);
  assertEquals(lines[0].slice(0, 26), "audit: ok, 18 records, hea");
});

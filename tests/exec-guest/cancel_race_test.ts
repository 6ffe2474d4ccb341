/** Many DELETEs of one exec at once: exactly one is told it cancelled (docs/guest-api.md#exec). */
import { assertEquals } from "../assert.ts";
import { call, fileAppears, withGuest } from "./helpers.ts";

Deno.test("of 25 concurrent DELETEs of one exec exactly one answers cancelled: true", async () => {
  // A grace long enough that the exec is still being stopped while every DELETE arrives: it
  // ignores SIGTERM (and so does its sleep), so only the SIGKILL after the grace ends it.
  await withGuest({ killGraceMs: 3_000 }, async (guest) => {
    const marker = `${guest.workspace}/ready`;
    const started = await call(guest, `${guest.exec}/v1/exec`, {
      method: "POST",
      json: {
        command: `trap '' TERM; echo go > ${marker}; while :; do sleep 0.05; done`,
        detach: true,
      },
    });
    assertEquals(started.status, 200);
    await fileAppears(marker);
    const url = `${guest.exec}/v1/exec/${started.body.exec_id}`;
    const answers = await Promise.all(
      Array.from({ length: 25 }, () => call(guest, url, { method: "DELETE" })),
    );
    assertEquals(answers.map((answer) => answer.status), Array(25).fill(200));
    const yes = answers.filter((answer) => answer.body.cancelled === true).length;
    assertEquals(yes, 1, "exactly one DELETE cancelled it");
    let state = await call(guest, url);
    while (state.body.status === "running") state = await call(guest, url);
    const status = await call(guest, `${guest.exec}/v1/status`);
    assertEquals(status.body.counters.cancelled, 1);
  });
});

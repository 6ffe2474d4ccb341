/**
 * A key that joined another key's call (the same tool and input, while the first waited on the
 * owner) names that call from then on: retried after the call has ended, also after a restart, it
 * gets the call's answer from the journal, with no new Decision record, no new approval and no
 * second charge (docs/broker-api.md#keys-the-same-request-the-same-answer). Through a real core and
 * its real sockets.
 */
import { assertEquals } from "../assert.ts";
import { grant, type Json, pendingApproval, type TestTask, until, withBox } from "../kit/mod.ts";

/** One /call that answers pending at once instead of waiting on the owner. */
async function callNow(task: TestTask, key: string): Promise<Json> {
  const body = { tool: "example.spend", input: { cents: 7, payee: "shop" }, key, waitMs: 0 };
  return (await task.request("POST", "/call", body)).body;
}

Deno.test("a key that joined a call and retries after it ended gets its answer, also after a restart: one decision, one approval, one charge", async () => {
  const grants = { spend: grant({ tool: "example.spend", mode: "ask" }) };
  await withBox({ grants }, async (box) => {
    const task = await box.startTask({ tools: ["example.spend"] });
    assertEquals((await callNow(task, "first")).pending, true);
    const id = await pendingApproval(box, task);
    // The same tool and input with its own key: it joins the call waiting on approval `id`.
    assertEquals((await callNow(task, "joiner")).pending, true);
    assertEquals((await box.admin("GET", "/approvals")).body.items.length, 1);

    assertEquals((await box.admin("POST", `/approvals/${id}/approve`)).status, 200);
    await until(async () => (await callNow(task, "first")).ok === true);
    const paid = await callNow(task, "first");
    assertEquals(paid.output.paid, 7);

    // The joiner retries its own key after the call ended: the call's answer, nothing new.
    assertEquals(await callNow(task, "joiner"), paid);
    const decisions = async () =>
      (await box.records()).filter((r: Json) => r.event.type === "decision").map((r: Json) =>
        r.event.call
      );
    assertEquals(await decisions(), ["first"]);
    assertEquals((await box.admin("GET", "/approvals")).body.items, []);
    assertEquals((await task.request("GET", "/task")).body.task.spentCents, 7);

    await box.restart();
    assertEquals(await callNow(task, "joiner"), paid);
    assertEquals(await decisions(), ["first"]);
    assertEquals((await task.request("GET", "/task")).body.task.spentCents, 7);
    // And the key stays bound to that call: another input with it is refused.
    const other = await task.request("POST", "/call", {
      tool: "example.spend",
      input: { cents: 8 },
      key: "joiner",
      waitMs: 0,
    });
    assertEquals(other.status, 409);
  });
});

/** A task's trailing work (a streamed model answer's usage) is awaited before its journal closes. */
import { Journal } from "../../mod/broker/journal.ts";
import { TaskHandle } from "../../mod/broker/task_handle.ts";
import { assertEquals } from "../assert.ts";
import { withHome } from "../kit/mod.ts";

Deno.test("settled waits for every trailing work, also work added while it waits, and ignores failures", async () => {
  await withHome(async (dir) => {
    const journal = await Journal.open(`${dir}/journal.jsonl`, { redact: (text) => text });
    const task = new TaskHandle({ id: "t1" } as never, journal, `${dir}/broker.sock`);
    const order: string[] = [];
    const first = Promise.withResolvers<void>();
    const failing = Promise.withResolvers<void>();
    task.trail(first.promise.then(() => {
      order.push("first");
      // Work started by trailing work is trailing work too.
      task.trail(Promise.resolve().then(() => order.push("second")));
    }));
    task.trail(failing.promise);
    const settled = task.settled().then(() => order.push("settled"));
    await Promise.resolve();
    assertEquals(order, []);
    failing.reject(new Error("the model answer was cut off"));
    first.resolve();
    await settled;
    assertEquals(order, ["first", "second", "settled"]);
    assertEquals(task.trailing.size, 0);
    journal.close();
  }, { prefix: "gurt-handle-" });
});

/**
 * The live task page misses nothing written between its rendering and its stream's first poll
 * (CI's one failure of stop 40: an approval that became pending in that gap never reached the
 * page). The watcher is told how many journal lines the page was made from; a line written since
 * is a change at once, not after the next line. The approvals' watch, likewise, tells a page once
 * its first poll has the version it waits from: the page may have been rendered before it.
 */
import { assertEquals } from "../assert.ts";
import { AdminClient } from "../../mod/admin/mod.ts";
import { adminSocketPath } from "../../mod/config/mod.ts";
import { ApprovalWatch } from "../../mod/portal/approval_watch.ts";
import { watchTask } from "../../mod/portal/task_watch.ts";
import { startBox } from "../kit/mod.ts";

Deno.test({
  name:
    "a journal line written after the page's rendering and before the watcher's first poll is a change at once",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const box = await startBox();
    const stops: (() => void)[] = [];
    try {
      const admin = new AdminClient(adminSocketPath(box.home));
      const task = await box.startTask();
      const rendered = (await box.admin("GET", `/tasks/${task.id}`)).body.journal.length;
      // The line the page has not shown, written before the watcher starts.
      assertEquals((await task.request("POST", "/step", { text: "in the gap" })).status, 200);

      const told = Promise.withResolvers<"told">();
      stops.push(watchTask(admin, task.id, () => told.resolve("told"), rendered));
      const late = new Promise<"not told">((resolve) => {
        const timer = setTimeout(() => resolve("not told"), 5000);
        stops.push(() => clearTimeout(timer));
      });
      assertEquals(await Promise.race([told.promise, late]), "told");

      // And a watcher that starts at the journal's length waits for the next line.
      const now = (await box.admin("GET", `/tasks/${task.id}`)).body.journal.length;
      let calls = 0;
      const next = Promise.withResolvers<void>();
      stops.push(watchTask(admin, task.id, () => {
        calls++;
        next.resolve();
      }, now));
      await new Promise((resolve) => setTimeout(resolve, 300));
      assertEquals(calls, 0, "told of a change when nothing was written");
      assertEquals((await task.request("POST", "/step", { text: "after" })).status, 200);
      await next.promise;
      assertEquals(calls, 1);
    } finally {
      for (const stop of stops) stop();
      await box.close();
    }
  },
});

Deno.test({
  name:
    "the approvals' watch tells a new page once its first poll answers, then at each change only",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const box = await startBox();
    const watch = new ApprovalWatch(new AdminClient(adminSocketPath(box.home)), { log: () => {} });
    try {
      let calls = 0;
      let wake = Promise.withResolvers<void>();
      const stop = watch.onChange(() => {
        calls++;
        wake.resolve();
      });
      await wake.promise;
      assertEquals(calls, 1, "not told when the watch had its version");
      wake = Promise.withResolvers<void>();
      await new Promise((resolve) => setTimeout(resolve, 300));
      assertEquals(calls, 1, "told of a change when nothing changed");
      stop();
    } finally {
      watch.close();
      await box.close();
    }
  },
});

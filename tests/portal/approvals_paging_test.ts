/**
 * approvalsView (mod/portal/approvals_paging.ts): which approvals one Approvals page shows. A page
 * is bounded however many approvals wait, and a task with a thousand approvals does not push
 * another task's off the first page.
 */
import { assertEquals } from "../assert.ts";
import type { PendingApprovalView } from "../../mod/admin/mod.ts";
import {
  approvalsView,
  pageLink,
  PER_TASK,
  TASK_PAGE_SIZE,
  TASKS_PER_PAGE,
} from "../../mod/portal/approvals_paging.ts";

function item(approval: number, task: string): PendingApprovalView {
  return {
    approval,
    task,
    key: `k${approval}`,
    kind: "grant",
    tool: "example.spend",
    arguments: "{}",
    grant: "spend",
    taint: "clean",
    costCents: null,
    created: "2026-12-03T00:00:00.000Z",
    expires: "2026-12-03T00:15:00.000Z",
  };
}

function shownIds(view: ReturnType<typeof approvalsView>): number[] {
  return view.groups.flatMap((group) => group.items.map((entry) => entry.approval));
}

Deno.test("a thousand approvals of one task and one of another: the other's is on the first page, which holds 4", () => {
  const flood = Array.from({ length: 1000 }, (_, i) => item(i + 1, "tflood"));
  // Listed newest first, to show the order is the page's own.
  const items = [item(2000, "tother"), ...flood.reverse()];
  const view = approvalsView(items, {});
  assertEquals(view.total, 1001);
  assertEquals([view.page, view.pages], [1, 1]);
  assertEquals(view.groups.map((group) => [group.task, group.more]), [["tflood", 997], [
    "tother",
    0,
  ]]);
  assertEquals(shownIds(view), [1, 2, 3, 2000]);
});

Deno.test("a task's own pages hold its approvals oldest first, TASK_PAGE_SIZE a page; a page past the end is the last", () => {
  const items = Array.from({ length: 60 }, (_, i) => item(i + 1, i % 2 === 0 ? "ta" : "tb"));
  const first = approvalsView(items, { task: "ta" });
  assertEquals([first.pages, first.groups[0].items.length], [2, TASK_PAGE_SIZE]);
  assertEquals(shownIds(first).slice(0, 3), [1, 3, 5]);
  const last = approvalsView(items, { task: "ta", page: "9" });
  assertEquals([last.page, shownIds(last)], [2, [51, 53, 55, 57, 59]]);
  assertEquals(approvalsView(items, { task: "tnone" }).groups, []);
  for (const page of ["0", "-1", "x", "1e3", ""]) {
    assertEquals(approvalsView(items, { task: "ta", page }).page, 1, page);
  }
});

Deno.test("many tasks: TASKS_PER_PAGE tasks a page, in the order of each one's oldest approval, so no page holds more than TASKS_PER_PAGE * PER_TASK", () => {
  const items: PendingApprovalView[] = [];
  for (let task = 0; task < 45; task++) {
    for (let n = 0; n < 5; n++) items.push(item(n * 100 + task, `t${task}`));
  }
  const view = approvalsView(items, {});
  assertEquals(view.pages, 3);
  assertEquals(shownIds(view).length, TASKS_PER_PAGE * PER_TASK);
  assertEquals(view.groups.map((group) => group.task).slice(0, 3), ["t0", "t1", "t2"]);
  const third = approvalsView(items, { page: "3" });
  assertEquals(third.groups.map((group) => group.task), ["t40", "t41", "t42", "t43", "t44"]);
  assertEquals(pageLink(third, 2), "/approvals?page=2");
  assertEquals(pageLink({ task: "t1" }, 1), "/approvals?task=t1");
  assertEquals(pageLink({ task: null }, 1), "/approvals");
});

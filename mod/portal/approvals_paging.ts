/**
 * Which pending approvals one Approvals page shows (docs/portal.md#approvals), so that no task can
 * bury another's under its own: the first pages group the approvals by task, each task's oldest
 * few and a note of how many more it has, the tasks in the order of their oldest approval; a task's
 * own pages hold all of its approvals, oldest first, a bounded number a page.
 */
import type { PendingApprovalView } from "../admin/mod.ts";

/** The approvals of one task that a page shows, and how many more it has waiting. */
export interface ApprovalGroup {
  task: string;
  items: PendingApprovalView[];
  /** This task's approvals not on this page. */
  more: number;
}

/** One page of the Approvals list. */
export interface ApprovalsView {
  /** Every approval waiting, on any page. */
  total: number;
  /** Only this task's approvals (`?task=`), or null for every task's. */
  task: string | null;
  /** 1-based; `pages` is at least 1. */
  page: number;
  pages: number;
  groups: ApprovalGroup[];
}

/** How many of each task's approvals the grouped pages show. */
export const PER_TASK = 3;
/** How many tasks one grouped page shows. */
export const TASKS_PER_PAGE = 20;
/** How many approvals one task's own page shows. */
export const TASK_PAGE_SIZE = 25;

/** What the owner asked for: the query's `task` and `page`, as typed (checked here). */
export interface PageQuery {
  task?: string;
  page?: string;
}

function pageNumber(text: string | undefined, pages: number): number {
  const asked = text !== undefined && /^[1-9]\d{0,6}$/.test(text) ? Number(text) : 1;
  return Math.min(asked, pages);
}

/** The page `query` asks for, of the approvals `items` (in any order). */
export function approvalsView(items: PendingApprovalView[], query: PageQuery): ApprovalsView {
  const oldestFirst = [...items].sort((a, b) => a.approval - b.approval);
  const total = oldestFirst.length;
  if (query.task !== undefined && query.task !== "") {
    const own = oldestFirst.filter((item) => item.task === query.task);
    const pages = Math.max(1, Math.ceil(own.length / TASK_PAGE_SIZE));
    const page = pageNumber(query.page, pages);
    const shown = own.slice((page - 1) * TASK_PAGE_SIZE, page * TASK_PAGE_SIZE);
    const groups = shown.length === 0
      ? []
      : [{ task: query.task, items: shown, more: own.length - shown.length }];
    return { total, task: query.task, page, pages, groups };
  }
  const byTask = new Map<string, PendingApprovalView[]>();
  for (const item of oldestFirst) {
    const list = byTask.get(item.task);
    if (list === undefined) byTask.set(item.task, [item]);
    else list.push(item);
  }
  // A Map keeps the order of first insertion: each task's oldest approval, oldest first.
  const all = [...byTask.entries()];
  const pages = Math.max(1, Math.ceil(all.length / TASKS_PER_PAGE));
  const page = pageNumber(query.page, pages);
  const groups = all.slice((page - 1) * TASKS_PER_PAGE, page * TASKS_PER_PAGE).map((
    [task, list],
  ) => ({ task, items: list.slice(0, PER_TASK), more: Math.max(0, list.length - PER_TASK) }));
  return { total, task: null, page, pages, groups };
}

/** The query string of another page of the same view. */
export function pageLink(view: Pick<ApprovalsView, "task">, page: number): string {
  const query = new URLSearchParams();
  if (view.task !== null) query.set("task", view.task);
  if (page > 1) query.set("page", String(page));
  const text = query.toString();
  return text === "" ? "/approvals" : `/approvals?${text}`;
}

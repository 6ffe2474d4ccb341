/**
 * A task's page in the portal is bounded however much the task writes (the review of issues 34
 * and 36): a task that posts thousands of steps and calls does not make a page of thousands of
 * journal lines for the owner's browser; the page shows the newest lines, with links to the
 * earlier ones. (Its audit records are the newest 500, as the core's index keeps them.)
 */
import { assert, assertEquals } from "../assert.ts";
import { grant } from "../kit/mod.ts";
import { JOURNAL_PAGE_SIZE } from "../../mod/portal/pages/tasks_page.tsx";
import { startPortalBox } from "./helpers.ts";

const STEPS = 1000;
const CALLS = 150;

function has(html: string, text: string): void {
  assert(html.includes(text), `the page does not hold ${text}`);
}

function count(html: string, pattern: RegExp): number {
  return html.match(pattern)?.length ?? 0;
}

Deno.test({
  name:
    "a task of 1000 steps and 150 allowed calls: its page shows 200 journal lines, the newest, and links to the earlier lines",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const pb = await startPortalBox({
      grants: { echo: grant({ tool: "example.echo", mode: "auto" }) },
    });
    try {
      const task = await pb.box.startTask();
      for (let i = 0; i < STEPS; i++) {
        const step = await task.request("POST", "/step", { text: `step number ${i}` });
        assertEquals(step.status, 200);
      }
      for (let i = 0; i < CALLS; i++) await task.call("example.echo", { text: "x" }, `k${i}`);
      const { cookie } = await pb.signIn();
      const get = async (path: string) => {
        const response = await fetch(`${pb.origin}${path}`, { headers: { cookie } });
        assertEquals(response.status, 200, path);
        return await response.text();
      };
      const page = await get(`/tasks/${task.id}`);
      const lines = count(page, /<li><time /g);
      assertEquals(lines, JOURNAL_PAGE_SIZE, `the page holds ${lines} journal lines`);
      const total = (await pb.box.admin("GET", `/tasks/${task.id}`)).body.journal.length;
      assert(total >= STEPS + CALLS, `${total} journal lines`);
      has(page, `Lines ${total - JOURNAL_PAGE_SIZE + 1} to ${total} of ${total}`);

      const earlier = /href="([^"]+)" rel="prev">Earlier lines/.exec(page)?.[1];
      assertEquals(earlier, `/tasks/${task.id}?from=${total - 2 * JOURNAL_PAGE_SIZE}`);
      const first = await get(`/tasks/${task.id}?from=0`);
      has(first, "Lines 1 to 200 of");
      has(first, "step step number 0<");
      has(first, "step step number 199<");
      assert(!first.includes("step step number 200<"), "the first page holds line 201");
      has(first, 'rel="next">Later lines');
    } finally {
      await pb.close();
    }
  },
});

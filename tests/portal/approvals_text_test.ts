/**
 * The Approvals page says why the owner is asked: a model request over budget is told apart, and
 * each card names the task's worker, prompt, spend and budget, and the cost in dollars.
 */
import { assertEquals, assertNotIncludes, assertStringIncludes } from "../assert.ts";
import { ApprovalsList, kindText } from "../../mod/portal/pages/approvals_page.tsx";
import { approvalsView } from "../../mod/portal/approvals_paging.ts";
import type { ListedTask, PendingApprovalView } from "../../mod/admin/mod.ts";

const BASE: PendingApprovalView = {
  approval: 7,
  task: "t1",
  key: "k",
  kind: "budget",
  tool: "box.model",
  arguments: "{}",
  grant: null,
  taint: "clean",
  costCents: null,
  created: "2026-12-02T00:00:00.000Z",
  expires: "2026-12-02T00:15:00.000Z",
};

Deno.test("a model request over budget is described as the task's model spend, a tool call's as the call", () => {
  assertEquals(
    kindText(BASE),
    "the task's model spend is over its budget; approving lets its next model request go",
  );
  assertEquals(
    kindText({ ...BASE, tool: "example.echo" }),
    "the call would take the task over its budget",
  );
  assertEquals(kindText({ ...BASE, kind: "ask", tool: "box.ask" }), "the task asks you a question");
});

Deno.test("an approval card says who asked and why: the task's worker, its prompt's first line escaped, its spend and budget, the cost in dollars", async () => {
  const task: ListedTask = {
    id: "t1",
    prompt: "Pay the <b>bakery</b> \u202eyes\nsecond line, not shown",
    worker: { kind: "agent", agent: "claude", model: null },
    tools: ["example.spend"],
    budgetCents: 5000,
    state: "waiting",
    created: BASE.created,
    ended: null,
    endReason: null,
    spentCents: 250,
    spend: [],
    hosts: [],
    workdirs: [],
    credentials: [],
    pending: [7],
  };
  const item = { ...BASE, kind: "grant" as const, tool: "example.spend", costCents: 1999 };
  const html = String(
    await ApprovalsList({
      view: approvalsView([item], {}),
      tasks: new Map([["t1", task]]),
      now: new Date(BASE.created),
      csrf: "token",
    }),
  );
  const text = html.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ");
  assertStringIncludes(text, "Asked by claude");
  assertStringIncludes(html, "Pay the &lt;b&gt;bakery&lt;/b&gt; \\u202eyes …");
  assertNotIncludes(html, "second line");
  assertNotIncludes(html, "<b>");
  assertStringIncludes(text, "Spent $2.50 of $50.00");
  assertStringIncludes(text, "Cost $19.99");
  assertNotIncludes(html, "¢");
  // The jargon: the taint's line of help, pointing to the docs.
  assertStringIncludes(text, "clean the most sensitive kind of data");
  assertStringIncludes(html, "docs/grants.md#taint");
});

/** The Approvals page says why the owner is asked: a model request over budget is told apart. */
import { assertEquals } from "../assert.ts";
import { kindText } from "../../mod/portal/pages/approvals_page.tsx";
import type { PendingApprovalView } from "../../mod/admin/mod.ts";

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

/**
 * The last requester of an ask or asking call dropping its connection withdraws its approval, also
 * when it dropped before the approval was opened (while its Decision record was being written):
 * the approval is withdrawn as soon as it opens, unless a request came back to wait on it. It
 * used to stay in the owner's list until it expired, waited on by nobody and holding one of the
 * task's [approvals] max_per_task slots.
 */
import { assertEquals } from "../assert.ts";
import { type Approvals, ApprovalTable, type PendingApproval } from "../../mod/broker/approvals.ts";
import { InFlight, type TaskHandle } from "../../mod/broker/task_handle.ts";
import { waitOn } from "../../mod/broker/waiting.ts";
import type { Config } from "../../mod/config/mod.ts";

const config = { approvals: { wait_ms: 60_000 } } as unknown as Config;

function shown(approval: number): PendingApproval {
  return {
    approval,
    task: "t1",
    key: `k${approval}`,
    kind: "ask",
    tool: "box.ask",
    arguments: "{}",
    grant: null,
    taint: "none",
    costCents: null,
    created: "2026-12-03T12:00:00.000Z",
    expires: "2026-12-03T13:00:00.000Z",
  };
}

function open(approvals: Approvals, flight: InFlight<unknown>, id: number) {
  const task = {} as TaskHandle;
  const entry = approvals.add(shown(id), { task, ask: null, flight, costCents: 0, kept: null });
  flight.markPending(id);
  return entry;
}

Deno.test("a requester that dropped before its approval opened has it withdrawn once it opens", async () => {
  const approvals: Approvals = new ApprovalTable();
  const flight = new InFlight<unknown>();
  const dropped = new AbortController();
  const wait = waitOn({ approvals, config }, { flight, signal: dropped.signal });
  dropped.abort();
  assertEquals((await wait).kind, "dropped");
  const entry = open(approvals, flight, 7);
  assertEquals(await entry.verdict, { kind: "withdrawn" });
  assertEquals(approvals.list(), []);
});

Deno.test("an approval whose dropped requester came back before it opened stays open for it", async () => {
  const approvals: Approvals = new ApprovalTable();
  const flight = new InFlight<unknown>();
  const dropped = new AbortController();
  const first = waitOn({ approvals, config }, { flight, signal: dropped.signal });
  dropped.abort();
  await first;
  const again = waitOn({ approvals, config }, {
    flight,
    signal: new AbortController().signal,
    waitMs: 0,
  });
  open(approvals, flight, 8);
  assertEquals((await again).kind, "pending");
  assertEquals(approvals.list().map((one) => one.approval), [8]);
});

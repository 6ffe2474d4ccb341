/**
 * How a request waits on a call or ask in flight: until it ends, or until it has waited on an
 * approval for wait_ms (then it answers pending and the approval stays open), or until its
 * connection drops. The last requester dropping its connection withdraws a pending approval:
 * nothing is written, and `gurt audit verify` reports the decision as abandoned
 * (docs/grants.md#approvals).
 */
import type { BrokerDeps } from "./deps.ts";
import type { FlowEnd, InFlight } from "./task_handle.ts";

/** How a wait ended. */
export type WaitEnd<A> = FlowEnd<A> | { kind: "pending" } | { kind: "dropped" };

/** What waiting uses: how long to wait on an approval, and the table to withdraw it from. */
export type WaitDeps = Pick<BrokerDeps, "approvals" | "config">;

/**
 * Waits on `flight` as one requester, whose connection `signal` aborts when it drops, and who
 * waits on an approval for `waitMs` if given, never longer than wait_ms.
 */
export async function waitOn<A>(
  deps: WaitDeps,
  wait: { flight: InFlight<A>; signal: AbortSignal; waitMs?: number },
): Promise<WaitEnd<A>> {
  const { flight, signal } = wait;
  const waitMs = Math.min(wait.waitMs ?? Infinity, deps.config.approvals.wait_ms);
  flight.waiters++;
  flight.requesterGone = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const dropped = new Promise<{ kind: "dropped" }>((resolve) => {
    onAbort = () => resolve({ kind: "dropped" });
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  // Pending is answered once the approval is on disk too: a restart, even a crash, opens it again.
  const pending = flight.pending.then(async (id) => {
    await new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
    });
    await deps.approvals.get(id)?.stored;
    return { kind: "pending" as const };
  });
  try {
    const end = await Promise.race([flight.done, pending, dropped]);
    flight.waiters--;
    if (end.kind === "dropped" && flight.waiters === 0) {
      flight.requesterGone = true;
      withdraw(deps, flight);
    }
    return end;
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
  }
}

function withdraw<A>(deps: WaitDeps, flight: InFlight<A>): void {
  if (flight.approval === null) {
    // Left before the approval was opened: it is withdrawn once it is, unless a request came back
    // to wait on it meanwhile. Otherwise it sat in the owner's list until it expired, waited on
    // by nobody and holding one of the task's approvals (approval_cap.ts).
    flight.pending.then(() => {
      if (flight.waiters === 0 && flight.requesterGone) withdraw(deps, flight);
    });
    return;
  }
  const entry = deps.approvals.take(flight.approval);
  if (entry === undefined) return; // someone is answering it; the flow sees requesterGone
  entry.settle({ kind: "withdrawn" });
}

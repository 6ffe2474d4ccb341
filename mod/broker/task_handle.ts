/** A live task inside the core: its record, journal, counters, lock and calls in flight. */
import type { Journal, KeyUse } from "./journal.ts";
import { type HttpError, Mutex } from "../common/mod.ts";
import type { TaskRecord } from "./task_store.ts";
import { carriedNanocents, NANOCENTS } from "./model_spend.ts";

/** The final answer of a call or an ask, or the note that its requester withdrew it. */
export type FlowEnd<A> =
  | { kind: "answer"; answer: A }
  | { kind: "withdrawn" }
  | { kind: "refused"; error: HttpError };

/**
 * A call (or ask) in flight. Requests with the same key, or the same tool and input, join it: one
 * decision, one approval, one run, one charge.
 */
export class InFlight<A> {
  /** Resolves once, when the flow ends. */
  readonly done: Promise<FlowEnd<A>>;
  /** Resolves when the flow starts waiting on an approval. */
  readonly pending: Promise<number>;
  /** How many requests wait on it now. */
  waiters = 0;
  /** True when the last waiter left by dropping its connection, not by being answered. */
  requesterGone = false;
  /** For a call: the key it was started with. */
  key: string | null = null;
  /**
   * For a call: the other keys whose requests joined it (the same tool and input). Each is
   * answered in the journal with its answer too (a tool.joined line), so that a retry of that key
   * later gets it, never a new decision or a second charge.
   */
  readonly joiners = new Set<string>();
  #end!: (end: FlowEnd<A>) => void;
  #pending!: (approval: number) => void;
  #approval: number | null = null;

  /**
   * @param call For a call: the tool and input digest its key is used for, which a request with
   * the same key and another call may not join.
   */
  constructor(readonly call: KeyUse | null = null) {
    this.done = new Promise((resolve) => (this.#end = resolve));
    this.pending = new Promise((resolve) => (this.#pending = resolve));
  }

  /** The approval it waits on, once it does. */
  get approval(): number | null {
    return this.#approval;
  }

  /** Records that the flow now waits on approval `id`. */
  markPending(id: number): void {
    this.#approval = id;
    this.#pending(id);
  }

  /** Ends the flow. */
  finish(end: FlowEnd<A>): void {
    this.#end(end);
  }
}

/** What the core keeps for a live task. */
export class TaskHandle {
  /** Serialises this task's state reads and raises with the audit records that follow them. */
  readonly ledger = new Mutex();
  /** Bytes of every body the task sent since the core started: steps, calls, model requests. */
  bytesWritten = 0;
  /** True once this core has written and synced the task's session state file. */
  stateWritten = false;
  /** Approvals of this task decided and not yet answered, each held by its call or ask. */
  openApprovals = 0;
  /** Cents reserved by calls that are running or approved but not yet recorded. */
  reservedCents = 0;
  readonly callsByKey = new Map<string, InFlight<unknown>>();
  readonly callsByInput = new Map<string, InFlight<unknown>>();
  readonly asksByKey = new Map<string, InFlight<unknown>>();
  /** The task's model requests over its budget, waiting on the owner (model_budget.ts). */
  modelBudgetAsk: InFlight<unknown> | null = null;
  /** The committed cents at which the owner last let its model requests on over its budget. */
  modelSpendApproved: number | null = null;
  /** Work that outlives its request (a streamed model answer's usage): awaited before closing. */
  readonly trailing = new Set<Promise<unknown>>();
  /** Resolved when the task has ended (for followers of its journal). */
  readonly ended: PromiseWithResolvers<void> = Promise.withResolvers<void>();

  constructor(public record: TaskRecord, readonly journal: Journal, readonly socket: string) {}

  get id(): string {
    return this.record.id;
  }

  /** Runs `work` as trailing work of this task: its journal stays open until it has settled. */
  trail(work: Promise<unknown>): void {
    const tracked = work.catch(() => {}).finally(() => this.trailing.delete(tracked));
    this.trailing.add(tracked);
  }

  /** Resolves once no trailing work is left. */
  async settled(): Promise<void> {
    while (this.trailing.size > 0) await Promise.all([...this.trailing]);
  }

  /**
   * Cents spent (from the journal) plus cents reserved, plus the part of a cent of model spend not
   * yet charged (model_spend.ts): the exact cost, a fraction where it falls so.
   */
  committedCents(): number {
    const state = this.journal.state;
    return state.spentCents + this.reservedCents + carriedNanocents(state) / NANOCENTS;
  }
}

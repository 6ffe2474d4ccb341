/**
 * The table of pending approvals, in memory (docs/grants.md#approvals). Every kind shares it: an
 * ask grant, a call over budget, a worker's /ask. An entry's id is its Decision record's seq.
 * Whoever takes an entry out of the table answers it: approve, refuse, expiry, the task ending, or
 * its requester going away. Everyone else finds it gone. JavaScript runs one handler at a time, so
 * `take` is the whole lock.
 */

/** What the owner is shown for one pending approval (docs/broker-api.md#the-admin-socket). */
export interface PendingApproval {
  approval: number;
  task: string;
  key: string;
  kind: "grant" | "budget" | "ask";
  tool: string;
  arguments: string;
  grant: string | null;
  taint: string;
  costCents: number | null;
  created: string;
  expires: string;
}

/** One entry: what is shown, what the answerer needs, and how its waiters learn the verdict. */
export interface PendingEntry<C, V> {
  readonly shown: PendingApproval;
  /** What the answerer needs to decide again (the policy Ask, the call). */
  readonly context: C;
  /** Resolves once, with the verdict, when the entry is answered. */
  readonly verdict: Promise<V>;
  /** How many requests are waiting on it right now. */
  waiters: number;
  /** Called by the one who took the entry. */
  settle(verdict: V): void;
}

/** The pending approvals of the whole core. */
export class ApprovalTable<C, V> {
  readonly #entries = new Map<number, PendingEntry<C, V>>();
  readonly #listeners = new Set<(changed: PendingApproval) => void>();

  /** Adds an entry for `shown`; the id is shown.approval. */
  add(shown: PendingApproval, context: C): PendingEntry<C, V> {
    if (this.#entries.has(shown.approval)) {
      throw new Error(`approval ${shown.approval} is already pending`);
    }
    let settle!: (verdict: V) => void;
    const verdict = new Promise<V>((resolve) => (settle = resolve));
    const entry: PendingEntry<C, V> = { shown, context, verdict, waiters: 0, settle };
    this.#entries.set(shown.approval, entry);
    this.#changed(shown);
    return entry;
  }

  /** Takes the entry out; the caller must answer it. Undefined if someone else already did. */
  take(id: number): PendingEntry<C, V> | undefined {
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    this.#entries.delete(id);
    this.#changed(entry.shown);
    return entry;
  }

  /** The entry with this id, still pending. */
  get(id: number): PendingEntry<C, V> | undefined {
    return this.#entries.get(id);
  }

  /** Every pending approval, oldest first. */
  list(): PendingApproval[] {
    return [...this.#entries.values()].map((entry) => entry.shown)
      .sort((a, b) => a.approval - b.approval);
  }

  /** The ids of a task's pending approvals. */
  ofTask(task: string): number[] {
    return this.list().filter((shown) => shown.task === task).map((shown) => shown.approval);
  }

  /** The ids whose expiry is at or before `now`. */
  expiredAt(now: Date): number[] {
    return this.list().filter((shown) => Date.parse(shown.expires) <= now.getTime())
      .map((shown) => shown.approval);
  }

  /**
   * Calls `listener` with the entry whenever one is added or taken: for live views, and for the
   * task manager, which marks the entry's task running or waiting.
   */
  onChange(listener: (changed: PendingApproval) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(shown: PendingApproval): void {
    for (const listener of this.#listeners) listener(shown);
  }
}

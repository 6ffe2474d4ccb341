/**
 * The version of the pending approvals, for live views: it moves on at every change of the table,
 * and `GET /approvals/changes?after=N&wait=MS` answers it as soon as it is not N (a long poll).
 */

/** The longest a poll waits for a change. */
export const MAX_CHANGES_WAIT_MS = 60_000;

/** Counts the changes of an approval table. */
export class ApprovalChanges {
  #version = 0;
  #moved = Promise.withResolvers<void>();

  constructor(approvals: { onChange(listener: () => void): () => void }) {
    approvals.onChange(() => {
      this.#version++;
      this.#moved.resolve();
      this.#moved = Promise.withResolvers<void>();
    });
  }

  /** The version, once it is not `after`, or when `waitMs` passes or `signal` aborts. */
  async after(after: number, options: { waitMs: number; signal: AbortSignal }): Promise<number> {
    if (after !== this.#version || options.waitMs <= 0 || options.signal.aborted) {
      return this.#version;
    }
    const waited = Promise.withResolvers<void>();
    const stop = () => waited.resolve();
    const timer = setTimeout(stop, Math.min(options.waitMs, MAX_CHANGES_WAIT_MS));
    options.signal.addEventListener("abort", stop, { once: true });
    try {
      await Promise.race([this.#moved.promise, waited.promise]);
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener("abort", stop);
    }
    return this.#version;
  }
}

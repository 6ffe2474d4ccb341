/**
 * The portal's view of the core's pending approvals changing: while a page listens, one long poll
 * at a time on the admin socket (`GET /approvals/changes`), and every listener told of a change.
 * A core that does not answer is asked again after a pause, and a page then sees the list as the
 * core gives it once it answers again.
 */
import type { AdminClient } from "../admin/mod.ts";

/** How long one poll asks the core to wait for a change. */
const POLL_WAIT_MS = 25_000;
/** The pause before asking again after the core did not answer. */
const RETRY_MS = 1000;

/** Tells listeners whenever the pending approvals change. */
export class ApprovalWatch {
  readonly #admin: AdminClient;
  readonly #log: (line: string) => void;
  readonly #listeners = new Set<() => void>();
  #polling: AbortController | null = null;
  #closed = false;

  constructor(admin: AdminClient, options: { log: (line: string) => void }) {
    this.#admin = admin;
    this.#log = options.log;
  }

  /** Calls `listener` at every change until the returned function is called. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    const idle = this.#polling === null || this.#polling.signal.aborted;
    if (idle && !this.#closed) void this.#poll();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#polling?.abort();
    };
  }

  /** Stops polling; no listener is told anything more. */
  close(): void {
    this.#closed = true;
    this.#listeners.clear();
    this.#polling?.abort();
  }

  async #poll(): Promise<void> {
    const polling = new AbortController();
    this.#polling = polling;
    let version: number | null = null;
    let failed = false;
    try {
      while (!polling.signal.aborted) {
        try {
          // The first ask answers at once with the version now; each one after waits for a change.
          const answer = await this.#admin.approvalChanges(version ?? 0, {
            waitMs: version === null ? 0 : POLL_WAIT_MS,
            signal: polling.signal,
          });
          if (!answer.ok) throw new Error(answer.error);
          const recovered = failed;
          if (recovered) this.#log("gurt portal: the core answers again");
          failed = false;
          // The first answer is a change too: a listener's page may have been rendered from
          // the list before the version this poll starts from.
          if (recovered || version === null || answer.value.version !== version) {
            for (const listener of [...this.#listeners]) listener();
          }
          version = answer.value.version;
        } catch (error) {
          if (polling.signal.aborted) break;
          if (!failed) {
            this.#log(`gurt portal: live approvals wait for the core: ${(error as Error).message}`);
          }
          // The list may have changed meanwhile: every page renders it afresh once it answers.
          failed = true;
          version = null;
          await pause(RETRY_MS, polling.signal);
        }
      }
    } finally {
      if (this.#polling === polling) this.#polling = null;
    }
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

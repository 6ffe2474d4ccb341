/**
 * The portal's view of one task changing, for its live page: a long poll of the task's journal on
 * the admin socket (`GET /tasks/:id/journal?after=N&wait=MS`) while the page listens, the listener
 * told of each new line and of the task's end. A core that does not answer is asked again after a
 * pause; the page is then rendered afresh.
 */
import type { AdminClient } from "../admin/mod.ts";

/** How long one poll asks the core to wait for a line. */
const POLL_WAIT_MS = 25_000;
/** The pause before asking again after the core did not answer. */
const RETRY_MS = 1000;

/**
 * Calls `listener` at each change of task `id` until the returned function is called. `seen` is
 * the journal's length in the rendering the page already has: a line written since, before the
 * first poll, is a change too (without it, a line written in that gap would never be shown).
 */
export function watchTask(
  admin: AdminClient,
  id: string,
  listener: () => void,
  seen?: number,
): () => void {
  const polling = new AbortController();
  void (async () => {
    let after: number | null = seen ?? null;
    while (!polling.signal.aborted) {
      try {
        // The first ask answers at once with the journal's length; each one after waits.
        const answer = await admin.journal(id, {
          after: after ?? 0,
          waitMs: after === null ? 0 : POLL_WAIT_MS,
          signal: polling.signal,
        });
        if (!answer.ok && answer.status === 404) break;
        if (!answer.ok) throw new Error(answer.error);
        const changed = after !== null && answer.value.next !== after;
        if (changed || answer.value.ended) listener();
        after = answer.value.next;
        // An ended task writes no more: the page has its final rendering.
        if (answer.value.ended) break;
      } catch {
        if (polling.signal.aborted) break;
        after = null;
        listener();
        await pause(RETRY_MS, polling.signal);
      }
    }
  })();
  return () => polling.abort();
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

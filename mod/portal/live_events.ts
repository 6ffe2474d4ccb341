/**
 * Live approvals over server-sent events: each time the approval table changes, every open stream
 * gets the freshly rendered list. The portal closes every stream before it shuts down.
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { PortalEnv } from "./context.ts";

/** The open streams of one portal. */
export class LiveStreams {
  readonly #stops = new Set<() => void>();

  /** Answers with a stream that sends `render()` at once and after every `subscribe` change. */
  serve(
    c: Context<PortalEnv>,
    source: { subscribe: (listener: () => void) => () => void; render: () => Promise<string> },
  ): Response {
    return streamSSE(c, async (stream) => {
      const done = Promise.withResolvers<void>();
      let dirty = true;
      let wake = Promise.withResolvers<void>();
      const unsubscribe = source.subscribe(() => {
        dirty = true;
        wake.resolve();
      });
      const stop = () => done.resolve();
      this.#stops.add(stop);
      stream.onAbort(stop);
      try {
        while (!stream.aborted && !stream.closed) {
          if (dirty) {
            dirty = false;
            await stream.writeSSE({ event: "approvals", data: await source.render() });
          }
          const ended = await Promise.race([
            done.promise.then(() => true),
            wake.promise.then(() => false),
          ]);
          if (ended) break;
          wake = Promise.withResolvers<void>();
        }
      } finally {
        unsubscribe();
        this.#stops.delete(stop);
      }
    });
  }

  /** Ends every open stream. */
  closeAll(): void {
    for (const stop of [...this.#stops]) stop();
  }
}

/**
 * Live views over server-sent events: each time what a stream watches changes (the approval table,
 * a task), the stream gets the freshly rendered part of its page. The portal closes every stream before it shuts down.
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
    source: {
      subscribe: (listener: () => void) => () => void;
      render: () => Promise<string>;
      /** The SSE event's name; `approvals` unless said. */
      event?: string;
    },
  ): Response {
    const event = source.event ?? "approvals";
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
            await stream.writeSSE({ event, data: await source.render() });
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

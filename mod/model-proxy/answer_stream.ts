/** A streamed answer on its way to the client, shown to the usage meter as it passes. */
import type { StreamUsage } from "./answer_usage.ts";

/**
 * The service's stream, passed on chunk by chunk as it comes, each chunk shown to the meter after
 * it is queued for the client. `end` is called once: at the stream's end (`whole` true), its
 * error, or when the client goes away (which cancels the service's answer too; `whole` false).
 */
export function meteredStream(
  source: ReadableStream<Uint8Array>,
  watch: { meter: StreamUsage | null; end: (whole: boolean) => void },
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let ended = false;
  const end = (whole: boolean) => {
    if (ended) return;
    ended = true;
    watch.meter?.end();
    watch.end(whole);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end(true);
          controller.close();
          return;
        }
        controller.enqueue(value);
        watch.meter?.push(value);
      } catch (error) {
        end(false);
        controller.error(error);
      }
    },
    async cancel(reason) {
      end(false);
      await reader.cancel(reason).catch(() => {});
    },
  });
}

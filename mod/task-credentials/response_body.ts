/**
 * The body of an upstream answer as the task gets it: every vault value replaced byte-exactly
 * (mod/vault's redactingExactBytes, a value split across reads included), counted and hashed as it
 * goes, and ended only once the call's Result record is written (`settled`), so a task that has
 * read the whole answer knows its record is in the log. A task that stops reading cancels the
 * upstream read; an upstream that fails mid-way errors the task's stream. Either way `ended`
 * resolves once, with what was sent.
 */
import { createHash } from "node:crypto";
import { redactingExactBytes, type TextRedaction } from "../vault/mod.ts";

/** What a body came to: the bytes the task was sent, their SHA-256, and how it ended. */
export interface BodyTotals {
  bytes: number;
  sha256: string;
  ended: "complete" | "cancelled by the task" | "the server's answer broke off";
}

/** A redacted, counted body; `ended` resolves when it is done, however it ends. */
export function countedBody(
  upstream: ReadableStream<Uint8Array> | null,
  options: { redaction: TextRedaction; settled(): Promise<unknown> },
): { body: ReadableStream<Uint8Array> | null; ended: Promise<BodyTotals> } {
  let finish!: (totals: BodyTotals) => void;
  const ended = new Promise<BodyTotals>((resolve) => (finish = resolve));
  if (upstream === null) {
    finish({ bytes: 0, sha256: createHash("sha256").digest("hex"), ended: "complete" });
    return { body: null, ended };
  }
  const reader = upstream.pipeThrough(redactingExactBytes(options.redaction)).getReader();
  const hash = createHash("sha256");
  let bytes = 0;
  let done = false;
  const end = (how: BodyTotals["ended"]): void => {
    if (done) return;
    done = true;
    finish({ bytes, sha256: hash.digest("hex"), ended: how });
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (error) {
        end("the server's answer broke off");
        controller.error(error);
        return;
      }
      if (read.done) {
        end("complete");
        // The Result record first: the task's last byte comes after it.
        await options.settled().catch(() => {});
        controller.close();
        return;
      }
      bytes += read.value.length;
      hash.update(read.value);
      controller.enqueue(read.value);
    },
    async cancel(reason) {
      end("cancelled by the task");
      await reader.cancel(reason).catch(() => {});
    },
  });
  return { body, ended };
}

/** Answers up to this size are read whole before they are sent. */
export const WHOLE_BELOW = 64 * 1024;

/**
 * `body` whole when it ends within `limit` bytes, else a stream of what was read then the rest. A
 * small answer is then written at once (head, body and end together): streamed, its end would be
 * a second small write on the TLS front's loopback connection, which Nagle holds for the
 * receiver's delayed ACK (some 40 ms a request; Deno's TLS connections cannot set TCP_NODELAY).
 */
export async function wholeIfSmall(
  body: ReadableStream<Uint8Array> | null,
  limit = WHOLE_BELOW,
): Promise<ReadableStream<Uint8Array> | Uint8Array<ArrayBuffer> | null> {
  if (body === null) return null;
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < limit) {
    let read: ReadableStreamReadResult<Uint8Array>;
    try {
      read = await reader.read();
    } catch (error) {
      // Broken before its end: the task's stream breaks as it would have.
      return new ReadableStream({ start: (controller) => controller.error(error) });
    }
    if (read.done) {
      const whole = new Uint8Array(new ArrayBuffer(size));
      let at = 0;
      for (const chunk of chunks) {
        whole.set(chunk, at);
        at += chunk.length;
      }
      return whole;
    }
    chunks.push(read.value);
    size += read.value.length;
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = chunks.shift();
      if (next !== undefined) return controller.enqueue(next);
      try {
        const read = await reader.read();
        if (read.done) controller.close();
        else controller.enqueue(read.value);
      } catch (error) {
        controller.error(error);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

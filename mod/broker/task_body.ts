/**
 * Reading a task's request body against the task's byte total since the core started: every body
 * it sends draws on one total, /call's and /step's as much as /model's, so a task cannot grow the
 * core by sending. A body takes its share as it arrives (its declared length at once, else chunk
 * by chunk), so bodies sent together never pass the total between them.
 */
import { HttpError, readBodyBytes } from "../common/mod.ts";
import type { TaskHandle } from "./task_handle.ts";

/** Reads a body of at most `limit` bytes, drawing on `task`'s total of `total` bytes. */
export async function readTaskBody(
  request: Request,
  caps: { task: TaskHandle; limit: number; total: number },
): Promise<Uint8Array> {
  const { task } = caps;
  let taken = 0;
  const take = (bytes: number): void => {
    const over = drawTaskBytes(task, { count: bytes, total: caps.total });
    if (over !== null) throw new HttpError(429, over);
    taken += bytes;
  };
  // A body refused or cut off gives back what it took: only bodies read whole count.
  const giveBack = (): void => {
    task.bytesWritten -= taken;
    taken = 0;
  };
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isSafeInteger(declared) && declared >= 0) {
    if (declared > caps.limit) return await readBodyBytes(request, caps.limit); // its own 413
    take(declared);
    try {
      return await readBodyBytes(request, declared);
    } catch (error) {
      giveBack();
      throw error;
    }
  }
  if (request.body === null) return new Uint8Array(0);
  // No declared length: each chunk draws on the total as it comes.
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > caps.limit) {
        throw new HttpError(413, `the body is larger than ${caps.limit} bytes`);
      }
      take(value.byteLength);
      chunks.push(value);
    }
  } catch (error) {
    giveBack();
    await reader.cancel().catch(() => {});
    if (error instanceof HttpError) throw error;
    throw new HttpError(400, `the body could not be read to its end: ${(error as Error).message}`);
  }
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.byteLength;
  }
  return whole;
}

/**
 * Draws `count` bytes on `task`'s total of `total` since the core started (its broker bodies and its
 * model endpoint's alike): null when it took them, else the sentence that refuses the body.
 */
export function drawTaskBytes(
  task: Pick<TaskHandle, "bytesWritten">,
  draw: { count: number; total: number },
): string | null {
  if (task.bytesWritten + draw.count > draw.total) {
    return `this task has written ${draw.total} bytes since gurt serve started, its limit; see runbook.md#task-write-limit`;
  }
  task.bytesWritten += draw.count;
  return null;
}

/**
 * The hashes of a log's lines for verifyHome, a chunk of whole lines at a time: computed in this
 * thread, or by a hasher Worker with no permission at the other end of a MessagePort, so that a
 * second core hashes while this thread parses. A line's hash is a third of the verifier's work
 * and node:crypto's cost per call, not per byte, is most of it (about 1.1 µs a line here).
 * This file imports nothing at run time.
 */

/** Hashes every line of a chunk. */
export interface LineHasher {
  /**
   * The SHA-256 of each line of the chunk (split as ChainVerifier.feed splits a file), as 64
   * lowercase hex digits a line, one after the other. The chunk is not changed.
   */
  hashLines(chunk: Uint8Array): Promise<string>;
}

/** The hashes of a chunk's lines, concatenated, with the given SHA-256 (hex) of one line. */
export function hexOfLines(chunk: Uint8Array, sha256Hex: (bytes: Uint8Array) => string): string {
  const hashes: string[] = [];
  let start = 0;
  while (start < chunk.length) {
    const found = chunk.indexOf(10, start);
    const end = found === -1 ? chunk.length : found;
    hashes.push(sha256Hex(chunk.subarray(start, end)));
    start = end + 1;
  }
  return hashes.join("");
}

/** A hasher in this thread; node:crypto is loaded only now, as only this one uses it. */
export async function localHasher(): Promise<LineHasher> {
  const { sha256Hex } = await import("./hash.ts");
  return { hashLines: (chunk) => Promise.resolve(hexOfLines(chunk, sha256Hex)) };
}

/** What the verifier sends the hasher Worker: a copy of one chunk, transferred. */
export interface HashRequest {
  chunk: Uint8Array;
}

/** The hasher Worker's answer to one request, in the order of the requests. */
export type HashAnswer = { hex: string; error: null } | { hex: null; error: string };

/**
 * A hasher that sends each chunk to the hasher Worker behind the port (startHasher) and resolves
 * with its answer. The port answers requests in order, so answers are matched to them by order.
 */
export function portHasher(port: MessagePort): LineHasher {
  const waiting: { resolve: (hex: string) => void; reject: (error: Error) => void }[] = [];
  port.onmessage = (event: MessageEvent<HashAnswer>) => {
    const next = waiting.shift();
    if (next === undefined) return;
    const answer = event.data;
    if (answer.hex !== null) next.resolve(answer.hex);
    else next.reject(new Error(`the audit hasher failed: ${answer.error}`));
  };
  return {
    hashLines(chunk: Uint8Array): Promise<string> {
      return new Promise<string>((resolve, reject) => {
        waiting.push({ resolve, reject });
        // A view is sent with its whole buffer: send a copy of the chunk alone, and move it.
        const copy = chunk.slice();
        const request: HashRequest = { chunk: copy };
        port.postMessage(request, [copy.buffer]);
      });
    },
  };
}

/**
 * Starts a hasher Worker that holds no permission at all, from the main thread (a Worker started
 * inside a role's Worker takes about 500 ms to pass its first message in Deno 2.9.6). The port is
 * for the role that verifies (VerifyHomeOptions.hasher); the caller terminates the Worker.
 */
export function startHasher(): { worker: Worker; port: MessagePort } {
  const worker = new Worker(new URL("./hasher_worker.ts", import.meta.url), {
    type: "module",
    name: "gurt-audit-hasher",
    deno: { permissions: "none" },
  });
  const channel = new MessageChannel();
  worker.postMessage({ port: channel.port1 }, [channel.port1]);
  return { worker, port: channel.port2 };
}

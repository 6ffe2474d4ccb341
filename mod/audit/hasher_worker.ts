/// <reference lib="deno.worker" />
/**
 * The audit hasher (line_hasher.ts's startHasher): a Worker with no permission that answers each
 * file sent on the port it is given (in shared memory, which it only reads) with its chunks, in
 * order: where each is, the hashes of its lines and where they end; then the end, or an error.
 */
import { sha256Hex } from "./hash.ts";
import { type HashAnswer, hashChunks, type HashRequest } from "./line_hasher.ts";

self.onmessage = (event: MessageEvent<{ port: MessagePort }>) => {
  const port = event.data.port;
  port.onmessage = (message: MessageEvent<HashRequest>) => {
    const { content, chunkBytes } = message.data;
    try {
      for (const { bytes, hex, ends } of hashChunks(content, sha256Hex, { chunkBytes })) {
        const start = bytes.byteOffset - content.byteOffset;
        const answer: HashAnswer = {
          kind: "chunk",
          chunk: { start, end: start + bytes.length, hex, ends },
        };
        port.postMessage(answer, [ends.buffer]);
      }
      port.postMessage({ kind: "end" } satisfies HashAnswer);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      port.postMessage({ kind: "error", error: reason } satisfies HashAnswer);
    }
  };
};

/// <reference lib="deno.worker" />
/**
 * The audit hasher (line_hasher.ts's startHasher): a Worker with no permission that answers each
 * file sent on the port it is given with its chunks, in order, each a copy moved back with the
 * hashes of its lines and where they end; then the end of the file, or an error.
 */
import { sha256Hex } from "./hash.ts";
import { type HashAnswer, hashChunks, type HashRequest } from "./line_hasher.ts";

self.onmessage = (event: MessageEvent<{ port: MessagePort }>) => {
  const port = event.data.port;
  port.onmessage = (message: MessageEvent<HashRequest>) => {
    const { content, chunkBytes } = message.data;
    try {
      for (const chunk of hashChunks(content, sha256Hex, { chunkBytes })) {
        // The chunk is a view of the whole file: a copy of it alone can be moved.
        const bytes = chunk.bytes.slice();
        const answer: HashAnswer = { kind: "chunk", chunk: { ...chunk, bytes } };
        port.postMessage(answer, [bytes.buffer, chunk.ends.buffer]);
      }
      port.postMessage({ kind: "end" } satisfies HashAnswer);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      port.postMessage({ kind: "error", error: reason } satisfies HashAnswer);
    }
  };
};

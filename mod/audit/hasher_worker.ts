/// <reference lib="deno.worker" />
/**
 * The audit hasher (line_hasher.ts's startHasher): a Worker that may open only the libcrypto file
 * it is given, through FFI, and hashes with node:crypto if it cannot. It answers each file sent on
 * the port it is given (in shared memory, which it only reads) with its chunks, in order: where
 * each is, the SHA-256 of its lines and where they end; then the end, or an error.
 */
import { lineSha256 } from "./line_digest.ts";
import { type HashAnswer, hashChunks, type HasherStart, type HashRequest } from "./line_hasher.ts";

self.onmessage = (event: MessageEvent<HasherStart>) => {
  const { port, library } = event.data;
  const sha256 = lineSha256(library);
  port.onmessage = async (message: MessageEvent<HashRequest>) => {
    const { content, chunkBytes } = message.data;
    try {
      const sha256Into = await sha256;
      for (const { bytes, digests, ends } of hashChunks(content, { sha256Into, chunkBytes })) {
        const start = bytes.byteOffset - content.byteOffset;
        const answer: HashAnswer = {
          kind: "chunk",
          chunk: { start, end: start + bytes.length, digests, ends },
        };
        port.postMessage(answer, [digests.buffer, ends.buffer]);
      }
      port.postMessage({ kind: "end" } satisfies HashAnswer);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      port.postMessage({ kind: "error", error: reason } satisfies HashAnswer);
    }
  };
};

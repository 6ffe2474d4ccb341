/// <reference lib="deno.worker" />
/**
 * The audit hasher (line_hasher.ts's startHasher): a Worker with no permission that answers each
 * chunk sent on the port it is given with the hashes of the chunk's lines, in order.
 */
import { sha256Hex } from "./hash.ts";
import { type HashAnswer, type HashRequest, hexOfLines } from "./line_hasher.ts";

self.onmessage = (event: MessageEvent<{ port: MessagePort }>) => {
  const port = event.data.port;
  port.onmessage = (message: MessageEvent<HashRequest>) => {
    let answer: HashAnswer;
    try {
      answer = { hex: hexOfLines(message.data.chunk, sha256Hex), error: null };
    } catch (error) {
      answer = { hex: null, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(answer);
  };
};

/// <reference lib="deno.worker" />
/** Runs the chain verifier inside a Worker that holds no permission at all. */
import { ChainVerifier } from "../../mod/audit/mod.ts";

self.onmessage = (event: MessageEvent<{ name: string; content: Uint8Array }>) => {
  const verifier = new ChainVerifier();
  verifier.feed(event.data.name, event.data.content);
  const report = verifier.finish();
  self.postMessage({ records: report.records, failure: report.failure });
};

/// <reference lib="deno.worker" />
/** The first code a role's Worker runs: loads the role's entry module and reports its status. */

interface Start {
  entry: string;
  args: unknown;
}

self.onmessage = async (event: MessageEvent<Start>) => {
  let status: number;
  try {
    const module = await import(event.data.entry);
    status = await module.default(event.data.args);
  } catch (error) {
    // One line a person can act on; the role's own messages already say what to do.
    console.error(error instanceof Error ? error.message : String(error));
    status = 1;
  }
  self.postMessage({ status });
};

/// <reference lib="deno.worker" />
/** The first code a role's Worker runs: loads the role's entry module and reports its status. */

interface Start {
  entry: string;
  args: unknown;
}

self.onmessage = async (event: MessageEvent<Start>) => {
  const module = await import(event.data.entry);
  const status: number = await module.default(event.data.args);
  self.postMessage({ status });
};

/**
 * Run by http_fetch_test.ts inside a network namespace of its own (`unshare --net`), where the
 * addresses named on the command line are assigned to `lo` and nothing leaves the namespace: for
 * each, an HTTPS server listens on it, and http_fetch fetches a host that resolves to it, first as
 * an ordinary host, then as one in allow_private_hosts. Prints one JSON line per address.
 */
import { HttpFetcher } from "../../mod/runtime/http_fetch.ts";
import { startTlsServer } from "./tls_fixture.ts";

/** What one address gave: the refusal (or the content) for each fetch, and the requests seen. */
export interface ProbeLine {
  address: string;
  ordinary: string;
  allowed: string;
  requests: string[];
}

async function outcome(fetcher: HttpFetcher): Promise<string> {
  try {
    return (await fetcher.fetch("https://good.test/", ["good.test"])).content;
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

for (const address of Deno.args) {
  const server = await startTlsServer(() => new Response("the box itself"), { hostname: address });
  try {
    const settings = { timeoutMs: 5000, maxBytes: 10_000, maxRedirects: 0 };
    const options = { ca: server.ca, port: server.port, resolve: () => Promise.resolve([address]) };
    const ordinary = await outcome(
      new HttpFetcher({ ...settings, allowPrivateHosts: [] }, options),
    );
    const requests = [...server.requests];
    const allowed = await outcome(
      new HttpFetcher({ ...settings, allowPrivateHosts: ["good.test"] }, options),
    );
    const line: ProbeLine = { address, ordinary, allowed, requests };
    console.log(JSON.stringify(line));
  } finally {
    await server.close();
  }
}

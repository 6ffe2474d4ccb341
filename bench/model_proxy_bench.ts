/**
 * The model endpoint's cost (issue 19): the time to the first byte of a streamed Messages answer
 * through the endpoint (its Unix socket, the body check, the key, the relay to the service) against
 * the same request straight to the service over loopback TCP, and the throughput of a long streamed
 * answer (LONG_MB of events) each way, measured in the same run by turns. The service and the
 * endpoint each run in their own process, as the service and the core do; this process is the
 * task's client (Deno's fetch). A bare Deno relay on a socket (no checks, no key, no meter, the
 * answer's body handed back as fetch gives it) gives the floor of one more hop, in the same run.
 * The endpoint holding each request in a real journal first (a model.hold line and its fdatasync,
 * as the core does: docs/audit.md#held-model-charges) is measured against the endpoint without.
 * The task's bridge (loopback TCP in its namespace to the socket) is not measured.
 */
import { type BenchRow, printTable } from "./table.ts";
import { p50 } from "./measure.ts";
import { LONG_MB } from "./model_proxy_peer.ts";
import { startPeer as startPeerProcess } from "./peer_process.ts";

const FIRST_BYTES = 400;
const ROUNDS = 5;

/** Starts model_proxy_peer.ts in the role `args[0]`. */
function startPeer(args: string[]): Promise<{ child: Deno.ChildProcess; line: string }> {
  return startPeerProcess("model_proxy_peer.ts", args, { flags: ["--unstable-no-legacy-abort"] });
}

const HEADERS = {
  "content-type": "application/json",
  "x-api-key": "placeholder",
  "anthropic-version": "2023-06-01",
  "anthropic-beta": "interleaved-thinking-2025-05-14",
};

/** A Messages request of about 6 KB, as an agent's first turn is. */
function requestBody(model: string): string {
  return JSON.stringify({
    model,
    max_tokens: 4096,
    stream: true,
    system: [{ type: "text", text: "You are a coding agent. ".repeat(40) }],
    messages: [{ role: "user", content: [{ type: "text", text: "Tidy my notes. ".repeat(200) }] }],
    tools: [{
      name: "Bash",
      description: "Runs a command",
      input_schema: { type: "object", properties: { command: { type: "string" } } },
    }],
  });
}

/** Sends a Messages request for `model` to the endpoint at `url`. */
function ask(url: string, request: { model: string; client?: Deno.HttpClient }): Promise<Response> {
  const { model, client } = request;
  return fetch(url, { method: "POST", headers: HEADERS, body: requestBody(model), client });
}

/** Milliseconds from sending the request to the answer's first body byte. */
async function firstByte(
  url: string,
  client?: Deno.HttpClient,
  model = "claude-sonnet-4-5",
): Promise<number> {
  const start = performance.now();
  const answer = await ask(url, { model, client });
  const reader = answer.body!.getReader();
  const first = await reader.read();
  const ms = performance.now() - start;
  if (first.done || answer.status !== 200) throw new Error(`answered ${answer.status}`);
  while (!(await reader.read()).done) {
    // The rest of the short answer.
  }
  return ms;
}

/** MB/s of the long answer. */
async function longAnswer(url: string, client?: Deno.HttpClient): Promise<number> {
  const start = performance.now();
  const answer = await ask(url, { model: "long", client });
  let got = 0;
  for await (const chunk of answer.body!) got += chunk.length;
  const seconds = (performance.now() - start) / 1000;
  if (got < LONG_MB * 1024 * 1024) throw new Error(`got ${got} bytes`);
  return got / 1024 / 1024 / seconds;
}

const dir = await Deno.makeTempDir({ prefix: "gurt-model-proxy-bench-" });
const service = await startPeer(["service"]);
const port = Number(service.line.split(" ")[1]);
const socket = `${dir}/model.sock`;
const proxy = await startPeer(["proxy", socket, String(port)]);
const heldSocket = `${dir}/held.sock`;
const held = await startPeer(["held", heldSocket, String(port), `${dir}/journal.jsonl`]);
const relaySocket = `${dir}/relay.sock`;
const relay = await startPeer(["relay", relaySocket, String(port)]);
const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
const relayClient = Deno.createHttpClient({ proxy: { transport: "unix", path: relaySocket } });
const heldClient = Deno.createHttpClient({ proxy: { transport: "unix", path: heldSocket } });
const direct = `http://127.0.0.1:${port}/v1/messages`;
const proxied = "http://127.0.0.1:4100/v1/messages";
try {
  // Each way by turns, so load on the machine falls on each alike.
  const times = {
    direct: [] as number[],
    proxied: [] as number[],
    relayed: [] as number[],
    held: [] as number[],
    provider: [] as number[],
  };
  for (let i = 0; i < FIRST_BYTES + 40; i++) {
    const a = await firstByte(direct);
    const b = await firstByte(proxied, client);
    // Before the held request, whose settling (a synced journal line) runs after its answer.
    const e = await firstByte(proxied, client, "gateway/claude-sonnet-4-5");
    const c = await firstByte(proxied, relayClient);
    const d = await firstByte(proxied, heldClient);
    if (i >= 40) {
      times.provider.push(e);
      times.direct.push(a);
      times.proxied.push(b);
      times.relayed.push(c);
      times.held.push(d);
    }
  }
  await longAnswer(direct);
  await longAnswer(proxied, client);
  await longAnswer(proxied, relayClient);
  const rates = { direct: [] as number[], proxied: [] as number[], relayed: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    rates.direct.push(await longAnswer(direct));
    rates.proxied.push(await longAnswer(proxied, client));
    rates.relayed.push(await longAnswer(proxied, relayClient));
  }
  const rows: BenchRow[] = [
    {
      what: `first streamed byte through the endpoint, p50 of ${FIRST_BYTES}`,
      unit: "ms",
      value: p50(times.proxied),
      baselineWhat: "the same request direct to the service on loopback TCP",
      baseline: p50(times.direct),
      target: "(report)",
    },
    {
      what: "time the endpoint adds to the first streamed byte, p50 difference",
      unit: "ms",
      value: p50(times.proxied) - p50(times.direct),
      baselineWhat: "the 1 ms goal",
      baseline: 1,
      target: "<= 1",
    },
    {
      what: `first streamed byte through the endpoint, p50 of ${FIRST_BYTES}`,
      unit: "ms",
      value: p50(times.proxied),
      baselineWhat: "the same through a bare Deno relay on a socket (the floor of one more hop)",
      baseline: p50(times.relayed),
      target: "(report)",
    },
    {
      what:
        `first streamed byte through the endpoint holding the request in a journal, p50 of ${FIRST_BYTES}`,
      unit: "ms",
      value: p50(times.held),
      baselineWhat: "the same through the endpoint without a hold",
      baseline: p50(times.proxied),
      target: "(report)",
    },
    {
      what: "time the endpoint with its hold adds to the first streamed byte, p50 difference",
      unit: "ms",
      value: p50(times.held) - p50(times.direct),
      baselineWhat: "the 1 ms goal",
      baseline: 1,
      target: "<= 1",
    },
    {
      what:
        `first streamed byte through the endpoint for a provider under a path (gateway/…), p50 of ${FIRST_BYTES}`,
      unit: "ms",
      value: p50(times.provider),
      baselineWhat: "the same through the endpoint for the built-in service",
      baseline: p50(times.proxied),
      target: "(report)",
    },
    {
      what: "time the endpoint adds to the first streamed byte for a provider under a path",
      unit: "ms",
      value: p50(times.provider) - p50(times.direct),
      baselineWhat: "the same for the built-in service",
      baseline: p50(times.proxied) - p50(times.direct),
      target: "(report)",
    },
    {
      what: `a ${LONG_MB} MiB streamed answer through the endpoint, p50 of ${ROUNDS}`,
      unit: "MB/s",
      value: p50(rates.proxied),
      baselineWhat: "the same answer direct to the service",
      baseline: p50(rates.direct),
      target: ">= 0.9",
    },
    {
      what: `a ${LONG_MB} MiB streamed answer through the endpoint, p50 of ${ROUNDS}`,
      unit: "MB/s",
      value: p50(rates.proxied),
      baselineWhat: "the same through the bare Deno relay",
      baseline: p50(rates.relayed),
      target: "(report)",
    },
  ];
  printTable(rows);
} finally {
  client.close();
  relayClient.close();
  heldClient.close();
  for (const peer of [relay, held, proxy, service]) {
    peer.child.kill("SIGTERM");
    await peer.child.status;
  }
  await Deno.remove(dir, { recursive: true });
}

/**
 * The egress proxy's cost (issue 18): a 100 MB download through the proxy (CONNECT on its Unix
 * socket, then the tunnel) against the same download straight from the origin over loopback TCP,
 * and the p50 time to set up a proxied connection (connect to the socket, CONNECT, the proxy
 * checks, dials and answers 200) against a direct loopback connect. The origin and the proxy each
 * run in their own process, as the core and the task do; this process is the client. A bare Deno
 * relay (CONNECT, dial, copy; no checks) gives the floor of one more hop in Deno, measured in the
 * same run. The task's bridge (loopback TCP in its namespace to the socket) is not measured.
 */
import { type BenchRow, printTable } from "./table.ts";
import { p50 } from "./measure.ts";
import { clientHello, writeAll } from "../tests/egress/egress_kit.ts";
import { startPeer, stopPeer } from "./peer_process.ts";

const MB = 1024 * 1024;
const DOWNLOAD = 100 * MB;
const ROUNDS = 5;
const SETUPS = 400;

/**
 * Reads the proxy's 200 answer. Nothing follows it until the client speaks (the origin waits for
 * its count), so whole reads take no byte past it.
 */
async function readConnected(conn: Deno.Conn): Promise<void> {
  const buffer = new Uint8Array(256);
  let text = "";
  while (!text.endsWith("\r\n\r\n")) {
    const read = await conn.read(buffer);
    if (read === null) throw new Error(`the proxy closed: ${text}`);
    text += String.fromCharCode(...buffer.subarray(0, read));
  }
  if (!text.startsWith("HTTP/1.1 200 ")) throw new Error(`the proxy answered ${text}`);
}

/** The ClientHello each download starts with, direct or not: a tunnel carries TLS for its host. */
const HELLO = clientHello("bench.test");

function countHeader(count: number): Uint8Array {
  const head = new Uint8Array(8);
  new DataView(head.buffer).setBigUint64(0, BigInt(count));
  return head;
}

async function direct(port: number): Promise<Deno.Conn> {
  return await Deno.connect({ hostname: "127.0.0.1", port });
}

async function proxied(socket: string, port: number): Promise<Deno.Conn> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  await writeAll(conn, `CONNECT bench.test:${port} HTTP/1.1\r\n\r\n`);
  await readConnected(conn);
  return conn;
}

/** MB/s of one download of DOWNLOAD bytes over `conn`. */
async function download(conn: Deno.Conn): Promise<number> {
  const buffer = new Uint8Array(256 * 1024);
  const start = performance.now();
  await writeAll(conn, HELLO);
  await writeAll(conn, countHeader(DOWNLOAD));
  let got = 0;
  for (;;) {
    const read = await conn.read(buffer);
    if (read === null) break;
    got += read;
  }
  const seconds = (performance.now() - start) / 1000;
  conn.close();
  if (got !== DOWNLOAD) throw new Error(`downloaded ${got} bytes, not ${DOWNLOAD}`);
  return got / MB / seconds;
}

/** p50 of set-up times of `open` (ms), each connection closed at once. */
async function setupTime(open: () => Promise<Deno.Conn>): Promise<number> {
  const start = performance.now();
  const conn = await open();
  const ms = performance.now() - start;
  conn.close();
  return ms;
}

const dir = await Deno.makeTempDir({ prefix: "gurt-egress-bench-" });
const origin = await startPeer("egress_peer.ts", ["origin"]);
const port = Number(origin.line.split(" ")[1]);
const proxySocket = `${dir}/egress.sock`;
const relaySocket = `${dir}/relay.sock`;
const proxy = await startPeer("egress_peer.ts", ["proxy", proxySocket, String(port)]);
const relay = await startPeer("egress_peer.ts", ["relay", relaySocket, String(port)]);
const paths = {
  direct: () => direct(port),
  proxied: () => proxied(proxySocket, port),
  relayed: () => proxied(relaySocket, port),
};
type Path = keyof typeof paths;
try {
  // Warm every path, then take turns, so load on the machine falls on each alike.
  for (const open of Object.values(paths)) await download(await open());
  const rates: Record<Path, number[]> = { direct: [], proxied: [], relayed: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const [path, open] of Object.entries(paths)) {
      rates[path as Path].push(await download(await open()));
    }
  }
  const setups: Record<Path, number[]> = { direct: [], proxied: [], relayed: [] };
  for (let i = 0; i < SETUPS + 20; i++) {
    for (const [path, open] of Object.entries(paths)) {
      const ms = await setupTime(open);
      if (i >= 20) setups[path as Path].push(ms);
    }
  }
  const rate = (path: Path) => p50(rates[path]);
  const setup = (path: Path) => p50(setups[path]);
  const rows: BenchRow[] = [
    {
      what: `100 MB download through the proxy (CONNECT tunnel), p50 of ${ROUNDS}`,
      unit: "MB/s",
      value: rate("proxied"),
      baselineWhat: `the same download direct on loopback TCP, p50 of ${ROUNDS}`,
      baseline: rate("direct"),
      target: ">= 0.8",
    },
    {
      what: `100 MB download through the proxy, p50 of ${ROUNDS}`,
      unit: "MB/s",
      value: rate("proxied"),
      baselineWhat: "the same through a bare Deno relay (no checks: the floor of one more hop)",
      baseline: rate("relayed"),
      target: "(report)",
    },
    {
      what: `set-up of a proxied connection (connect, CONNECT, 200), p50 of ${SETUPS}`,
      unit: "ms",
      value: setup("proxied"),
      baselineWhat: `a direct loopback TCP connect, p50 of ${SETUPS}`,
      baseline: setup("direct"),
      target: "(report)",
    },
    {
      what: "time the proxy adds to a connection's set-up, p50 difference",
      unit: "ms",
      value: setup("proxied") - setup("direct"),
      baselineWhat: "the 1 ms goal",
      baseline: 1,
      target: "<= 1",
    },
    {
      what: `set-up of a proxied connection, p50 of ${SETUPS}`,
      unit: "ms",
      value: setup("proxied"),
      baselineWhat: "the same through the bare Deno relay",
      baseline: setup("relayed"),
      target: "(report)",
    },
  ];
  printTable(rows);
} finally {
  for (const peer of [relay, proxy, origin]) await stopPeer(peer);
  await Deno.remove(dir, { recursive: true });
}

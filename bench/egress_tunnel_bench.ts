/**
 * The laptop egress tunnel (docs/egress-tunnel.md) beside a direct loopback download, in one run:
 * the server, the guest end and the laptop client each in its own process. Throughput of a 100 MB
 * download through the tunnel's proxy (target at least 0.5 of direct), and the time to the first
 * byte of a small page on a fresh connection (the tunnel's added p50, target at most 2 ms).
 * Through the tunnel the request is absolute-form `GET http://…` to the proxy, as Chromium sends a
 * plain http URL. The guest's peer check (its Perl helper's look per connection in `gurt guest`) is left
 * out of the downloads, since the downloader is no Chromium; its cost is printed apart.
 */
import { p50 } from "./measure.ts";
import { startPeer, stopPeer } from "./peer_process.ts";
import { printTable } from "./table.ts";
import { PeerCheck } from "../mod/egress-tunnel/peer_check.ts";

const TOKEN = "bench-token";
const server = await startPeer("egress_tunnel_peer.ts", ["server"]);
const guest = await startPeer("egress_tunnel_peer.ts", ["guest", TOKEN]);
const serverPort = Number(server.line.split(" ")[1]);
const [wsPort, proxyPort] = guest.line.split(" ").slice(1).map(Number);
const client = await startPeer("egress_tunnel_peer.ts", [
  "client",
  `ws://127.0.0.1:${wsPort}/`,
  TOKEN,
]);

/** GET path, direct or through the proxy; the ms to the first body byte and to the end. */
async function fetchOnce(
  path: string,
  viaTunnel: boolean,
): Promise<{ first: number; all: number; bytes: number }> {
  const started = performance.now();
  const conn = await Deno.connect({
    hostname: "127.0.0.1",
    port: viaTunnel ? proxyPort : serverPort,
  });
  conn.setNoDelay(true);
  const target = viaTunnel ? `http://127.0.0.1:${serverPort}${path}` : path;
  await conn.write(new TextEncoder().encode(`GET ${target} HTTP/1.1\r\nHost: bench\r\n\r\n`));
  const buffer = new Uint8Array(256 * 1024);
  let first = 0;
  let bytes = 0;
  for (;;) {
    const count = await conn.read(buffer);
    if (count === null) break;
    if (first === 0) first = performance.now() - started;
    bytes += count;
  }
  conn.close();
  return { first, all: performance.now() - started, bytes };
}

try {
  // Wait for the client to attach: a small page through the proxy answers 200.
  for (let i = 0; i < 200; i++) {
    const probe = await fetchOnce("/small", true);
    if (probe.bytes > 0 && probe.bytes < 200) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  const firsts = { direct: [] as number[], tunnel: [] as number[] };
  for (let i = 0; i < 200; i++) {
    firsts.direct.push((await fetchOnce("/small", false)).first);
    firsts.tunnel.push((await fetchOnce("/small", true)).first);
  }
  const rates = { direct: [] as number[], tunnel: [] as number[] };
  for (let i = 0; i < 3; i++) {
    for (const way of ["direct", "tunnel"] as const) {
      const run = await fetchOnce("/big", way === "tunnel");
      if (run.bytes < 100 * 1024 * 1024) throw new Error(`${way}: only ${run.bytes} bytes arrived`);
      rates[way].push(run.bytes / 1024 / 1024 / (run.all / 1000));
    }
  }
  const direct = p50(rates.direct);
  const tunnel = p50(rates.tunnel);
  printTable([
    {
      what: "100 MB through the tunnel",
      unit: "MB/s",
      value: tunnel,
      baselineWhat: "direct loopback",
      baseline: direct,
      target: ">= 0.5",
    },
  ]);
  const added = p50(firsts.tunnel) - p50(firsts.direct);
  // The peer check gurt guest runs per proxied connection: a stand-in for Chromium in its own
  // process group holds a connection to us, and each look finds it (the held pid first).
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const holder = new Deno.Command("bash", {
    args: ["-c", `exec 3<>/dev/tcp/127.0.0.1/${(listener.addr as Deno.NetAddr).port}; read -u 3 x`],
    detached: true,
    stdout: "null",
  }).spawn();
  const accepted = await listener.accept();
  const check = new PeerCheck(() => holder.pid);
  const checks: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    const refused = await check.refusal(
      accepted.remoteAddr as Deno.NetAddr,
      accepted.localAddr as Deno.NetAddr,
    );
    if (refused !== null) throw new Error(`the peer check refused its own stand-in: ${refused}`);
    checks.push(performance.now() - t);
  }
  check.close();
  holder.kill("SIGKILL");
  await holder.status;
  accepted.close();
  listener.close();
  console.log("");
  console.log("| first byte of a small page, fresh connection | p50 | added | target | met |");
  console.log("| --- | --- | --- | --- | --- |");
  console.log(`| direct loopback | ${p50(firsts.direct).toFixed(3)} ms | | | |`);
  console.log(
    `| through the tunnel | ${p50(firsts.tunnel).toFixed(3)} ms | ${
      added.toFixed(3)
    } ms | <= 2 ms | ${added <= 2 ? "yes" : "no"} |`,
  );
  console.log(`| the guest's peer check, apart | ${p50(checks).toFixed(3)} ms | | | |`);
} finally {
  await stopPeer(client);
  await stopPeer(guest);
  await stopPeer(server);
}

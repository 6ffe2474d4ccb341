/**
 * The egress tunnel bench's other processes: `server` (a raw HTTP server: /big is 100 MB, /small a
 * short page), `guest` (the tunnel's guest end, its WebSocket and proxy, admitting every loopback
 * peer since the bench's downloader is no Chromium) and `client` (the laptop's end). Each prints
 * `ready PORT [PORT]` and runs until SIGTERM.
 */
import { EgressHub, runClient, serveProxy } from "../mod/egress-tunnel/mod.ts";

const BIG = 100 * 1024 * 1024;
const role = Deno.args[0];
const stop = new AbortController();
Deno.addSignalListener("SIGTERM", () => stop.abort());

if (role === "server") {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  console.log(`ready ${(listener.addr as Deno.NetAddr).port}`);
  stop.signal.addEventListener("abort", () => listener.close());
  const chunk = new Uint8Array(256 * 1024).fill(120);
  for await (const conn of listener) serve(conn, chunk).catch(() => {});
} else if (role === "guest") {
  const hub = new EgressHub(Deno.args[1], undefined, () => {});
  const ws = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  hub.serve(ws);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  console.log(`ready ${(ws.addr as Deno.NetAddr).port} ${(listener.addr as Deno.NetAddr).port}`);
  stop.signal.addEventListener("abort", () => {
    hub.close();
    listener.close();
    ws.close();
  });
  await serveProxy(listener, hub, () => Promise.resolve(null));
} else if (role === "client") {
  console.log("ready");
  await runClient({
    ws: Deno.args[1],
    token: Deno.args[2],
    allow: ["127.0.0.1"],
    denyPrivate: false,
    log: () => {},
    signal: stop.signal,
  });
}

async function serve(conn: Deno.Conn, chunk: Uint8Array): Promise<void> {
  (conn as Deno.TcpConn).setNoDelay(true);
  const buffer = new Uint8Array(8192);
  let text = "";
  while (!text.includes("\r\n\r\n")) {
    const count = await conn.read(buffer);
    if (count === null) return conn.close();
    text += new TextDecoder().decode(buffer.subarray(0, count));
  }
  const big = text.startsWith("GET /big");
  const body = big ? BIG : 13;
  const head = `HTTP/1.1 200 OK\r\ncontent-length: ${body}\r\nconnection: close\r\n\r\n`;
  if (!big) {
    await conn.write(new TextEncoder().encode(head + "a small page\n"));
  } else {
    await conn.write(new TextEncoder().encode(head));
    for (let sent = 0; sent < BIG; sent += chunk.length) await writeAll(conn, chunk);
  }
  conn.close();
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

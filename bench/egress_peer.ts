/**
 * The other processes of bench/egress_bench.ts. `origin`: a TCP server on 127.0.0.1 that reads an
 * 8-byte big-endian count from each connection, writes that many bytes and closes; it prints
 * `ready <port>`. `proxy <socket> <origin port>`: a task's egress proxy on the Unix socket, its list
 * naming bench.test on the origin's port, mapped to 127.0.0.1 and allowed to be private; it prints
 * `ready`. `relay <socket> <origin port>`: the least a proxy does (CONNECT, dial, copy), for the
 * floor of one more hop in Deno. SIGTERM ends each.
 */
import { serveEgress } from "../mod/egress/mod.ts";
import { copyOneWay, readExactly } from "../tests/egress/egress_kit.ts";

/** Reads exactly `count` bytes, or null if the connection ends first. */
async function readCount(conn: Deno.Conn, count: number): Promise<Uint8Array | null> {
  const bytes = await readExactly(conn, count);
  return bytes.length === count ? bytes : null;
}

const [mode, ...rest] = Deno.args;

if (mode === "origin") {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const block = new Uint8Array(256 * 1024).fill(120);
  console.log(`ready ${listener.addr.port}`);
  Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
  for await (const conn of listener) {
    void (async () => {
      try {
        // A ClientHello first (the proxy lets a tunnel carry TLS for its host), then the count.
        const record = await readCount(conn, 5);
        if (record === null) return;
        if (await readCount(conn, (record[3] << 8) | record[4]) === null) return;
        const head = await readCount(conn, 8);
        if (head === null) return;
        let left = Number(new DataView(head.buffer).getBigUint64(0));
        while (left > 0) {
          const part = left >= block.length ? block : block.subarray(0, left);
          left -= await conn.write(part);
        }
      } catch {
        // The client left.
      } finally {
        try {
          conn.close();
        } catch {
          // Closed.
        }
      }
    })();
  }
} else if (mode === "proxy") {
  const [socketPath, originPort] = rest;
  const server = await serveEgress({
    socketPath,
    policy: () => ({
      hosts: [`bench.test:${originPort}`],
      allowPrivate: ["bench.test"],
      resolve: { "bench.test": "127.0.0.1" },
      unknown: "deny",
    }),
    ownAddresses: () => Deno.networkInterfaces().map((entry) => entry.address),
    onBlocked: (event) => {
      console.error(`blocked: ${JSON.stringify(event)}`);
      return Promise.resolve();
    },
  });
  console.log("ready");
  Deno.addSignalListener("SIGTERM", async () => {
    await server.close();
    Deno.exit(0);
  });
} else if (mode === "relay") {
  // The floor of any proxy in Deno: reads the CONNECT head, dials the origin, answers 200 and
  // copies both ways, with no check at all.
  const [socketPath, originPort] = rest;
  const listener = Deno.listen({ transport: "unix", path: socketPath });
  console.log("ready");
  Deno.addSignalListener("SIGTERM", () => Deno.exit(0));
  for await (const conn of listener) {
    void (async () => {
      const buffer = new Uint8Array(4096);
      let head = "";
      while (!head.endsWith("\r\n\r\n")) {
        const read = await conn.read(buffer);
        if (read === null) return conn.close();
        head += String.fromCharCode(...buffer.subarray(0, read));
      }
      const origin = await Deno.connect({ hostname: "127.0.0.1", port: Number(originPort) });
      await conn.write(new TextEncoder().encode("HTTP/1.1 200 Connection Established\r\n\r\n"));
      await Promise.all([
        copyOneWay(conn, origin, 256 * 1024),
        copyOneWay(origin, conn, 256 * 1024),
      ]);
      conn.close();
      origin.close();
    })();
  }
} else {
  throw new Error(`egress_peer: unknown mode ${mode}`);
}

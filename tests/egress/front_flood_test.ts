/**
 * The egress TLS front survives running out of file descriptors (issue 28, "a task can stop the
 * core"): a real `gurt serve` under a low open-files limit, a task's tunnel to api.anthropic.com
 * answered by the front, and a flood of idle connections to the front's loopback listener from
 * another process. Before, the front's listeners were Deno.serve, whose accept loop threw "Too
 * many open files" where nothing caught it, and the core exited with every task. Now the front
 * says so once, the tunnel it has is served, and a new tunnel is served once the flood ends.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startServe, startTask, waitFor, withHome } from "../kit/mod.ts";
import { readHead, sendConnect, writeAll } from "./egress_kit.ts";

const FLOOD_CLIENT = new URL("../net/flood_client.ts", import.meta.url).pathname;

/**
 * A TLS tunnel to api.anthropic.com through a task's egress proxy (its Unix socket, reached over a
 * loopback relay of the test's own: Deno's TLS client runs only over TCP), trusting the box CA.
 */
async function modelTunnel(home: string, task: string): Promise<Deno.TlsConn> {
  const relay = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const near = Deno.connect({ hostname: "127.0.0.1", port: relay.addr.port });
  const far = await relay.accept();
  relay.close();
  const proxy = await Deno.connect({
    transport: "unix",
    path: `${home}/tasks/${task}/egress.sock`,
  });
  far.readable.pipeTo(proxy.writable).catch(() => {});
  proxy.readable.pipeTo(far.writable).catch(() => {});
  const conn = await sendConnect(await near, "api.anthropic.com:443");
  return await Deno.startTls(conn, {
    hostname: "api.anthropic.com",
    caCerts: [await Deno.readTextFile(`${home}/ca/bundle.pem`)],
  });
}

/** One request on a kept tunnel; the answer's head (a path the endpoint does not relay: 404). */
async function ask(tls: Deno.TlsConn): Promise<string> {
  await writeAll(
    tls,
    "GET /v1/not-relayed HTTP/1.1\r\nhost: api.anthropic.com\r\nx-api-key: x\r\n\r\n",
  );
  const head = await readHead(tls);
  const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? "0");
  let left = length;
  const buffer = new Uint8Array(4096);
  while (left > 0) {
    const read = await tls.read(buffer.subarray(0, Math.min(left, buffer.length)));
    if (read === null) break;
    left -= read;
  }
  return head;
}

/** The core's listening TCP ports on 127.0.0.1. */
async function loopbackListeners(pid: number): Promise<number[]> {
  const { stdout } = await new Deno.Command("ss", { args: ["-Hltnp"], stdout: "piped" }).output();
  return new TextDecoder().decode(stdout).split("\n")
    .filter((line) => line.includes(`pid=${pid},`))
    .map((line) => /127\.0\.0\.1:(\d+)/.exec(line)?.[1])
    .filter((port): port is string => port !== undefined)
    .map(Number);
}

Deno.test("a core out of file descriptors from a flood on the TLS front's listener says so, serves the model tunnel it has, and new tunnels after", async () => {
  await withHome(async (home) => {
    await Deno.writeTextFile(`${home}/gurt.toml`, "[broker]\ndoor_connections = 65536\n");
    const serve = await startServe(home, { wrap: ["prlimit", "--nofile=400"] });
    assertEquals(serve.exited, null, serve.stderr());
    let flood: Deno.ChildProcess | null = null;
    let held: Deno.TlsConn | null = null;
    try {
      const task = await startTask(serve, { tools: ["example.echo"] });
      const before = await loopbackListeners(serve.child.pid);
      held = await modelTunnel(home, task);
      assertStringIncludes(await ask(held), " 404 ");
      // The front's listener opens on the host's first tunnel.
      const ports = (await loopbackListeners(serve.child.pid)).filter((p) => !before.includes(p));
      assertEquals(ports.length, 1, `the core's new loopback listeners: ${ports} (${before})`);
      flood = new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-all", FLOOD_CLIENT, `tcp:${ports[0]}`, "800"],
        stdin: "piped",
        stdout: "null",
        stderr: "inherit",
      }).spawn();
      const exited = serve.child.status.then(() => true);
      await waitFor(
        () => serve.stderr().includes("run out of file descriptors") || serve.exited !== null,
        { what: "the core to run out of descriptors", ms: 30_000 },
      );
      const died = await Promise.race([
        exited,
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 500)),
      ]);
      assert(!died, `the core exited:\n${serve.stderr().slice(-2000)}`);
      // The tunnel it has is served while no new connection can be accepted.
      assertStringIncludes(await ask(held), " 404 ");
      await flood.stdin.close();
      await flood.status;
      flood = null;
      const again = await modelTunnel(home, task);
      try {
        assertStringIncludes(await ask(again), " 404 ");
      } finally {
        again.close();
      }
      const lines = serve.stderr().split("\n");
      const said = lines.filter((line) => line.includes("run out of file descriptors")).length;
      // Once a time they run out (a stranger's connection the front closes lets one more in).
      assert(said >= 1 && said <= 3, serve.stderr().slice(-3000));
    } finally {
      held?.close();
      if (flood !== null) {
        await flood.stdin.close();
        await flood.status;
      }
      const status = await serve.stop();
      assertEquals(status.code, 0, serve.stderr());
    }
  }, { prefix: "gurt-nofile-" });
});

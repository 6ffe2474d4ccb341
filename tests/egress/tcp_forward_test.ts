/**
 * mod/egress's TCP forward (an app's `ports`): a connection on its Unix socket is relayed both
 * ways to its one host:port; a loopback target only with allowPrivate naming it, a metadata
 * address never, a name through the policy's resolve map; each refusal told and the connection
 * closed.
 */
import { type BlockedEvent, type EgressPolicy, serveForward } from "../../mod/egress/mod.ts";
import { assertEquals } from "../assert.ts";

function policy(allowPrivate: string[], resolve: Record<string, string> = {}): EgressPolicy {
  return { hosts: [], allowPrivate, resolve, unknown: "deny" };
}

/** A TCP server on loopback that answers each connection with "echo:" and what it read. */
function echoServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const done = (async () => {
    for await (const conn of listener) {
      const buffer = new Uint8Array(64);
      const read = await conn.read(buffer);
      const text = new TextDecoder().decode(buffer.subarray(0, read ?? 0));
      await conn.write(new TextEncoder().encode(`echo:${text}`));
      conn.close();
    }
  })().catch(() => {});
  return { port: (listener.addr as Deno.NetAddr).port, close: () => (listener.close(), done) };
}

/** Connects to the forward, sends `text`, and reads until the forward closes. */
async function exchange(socket: string, text: string): Promise<string> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  await conn.write(new TextEncoder().encode(text)).catch(() => 0);
  let answer = "";
  const buffer = new Uint8Array(64);
  for (;;) {
    const read = await conn.read(buffer).catch(() => null);
    if (read === null) break;
    answer += new TextDecoder().decode(buffer.subarray(0, read));
  }
  conn.close();
  return answer;
}

async function withForward(
  host: string,
  port: number,
  rules: EgressPolicy,
  body: (socket: string, blocked: BlockedEvent[]) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const blocked: BlockedEvent[] = [];
  const forward = await serveForward({
    socketPath: `${dir}/f.sock`,
    host,
    port,
    policy: () => rules,
    ownAddresses: () => [],
    onBlocked: (event) => (blocked.push(event), Promise.resolve()),
    connectTimeoutMs: 2000,
  });
  try {
    assertEquals((await Deno.stat(`${dir}/f.sock`)).mode! & 0o777, 0o600);
    await body(`${dir}/f.sock`, blocked);
  } finally {
    await forward.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a forward relays to its loopback target when allowPrivate names it, and refuses it when not", async () => {
  const echo = echoServer();
  try {
    await withForward("127.0.0.1", echo.port, policy(["127.0.0.1"]), async (socket, blocked) => {
      assertEquals(await exchange(socket, "ping"), "echo:ping");
      assertEquals(blocked, []);
    });
    await withForward("127.0.0.1", echo.port, policy([]), async (socket, blocked) => {
      assertEquals(await exchange(socket, "ping"), "");
      assertEquals(blocked, [{ host: "127.0.0.1", port: echo.port, reason: "private_address" }]);
    });
    // A name goes through the resolve map, and is allowed private by its name.
    const mapped = policy(["db.internal"], { "db.internal": "127.0.0.1" });
    await withForward("db.internal", echo.port, mapped, async (socket, blocked) => {
      assertEquals(await exchange(socket, "name"), "echo:name");
      assertEquals(blocked, []);
    });
  } finally {
    await echo.close();
  }
});

Deno.test("a forward never reaches a metadata address, allowPrivate or not", async () => {
  const rules = policy(["169.254.169.254"]);
  await withForward("169.254.169.254", 80, rules, async (socket, blocked) => {
    assertEquals(await exchange(socket, "GET / HTTP/1.0\r\n\r\n"), "");
    assertEquals(blocked, [{ host: "169.254.169.254", port: 80, reason: "private_address" }]);
  });
});

/**
 * Attacks on the tunnel's guest end, over real sockets: the WebSocket without the token or with
 * another protocol version, frames a client may not send, a flood of streams past the limit, and
 * a client that stops reading (the guest holds at most one window per stream).
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { gurtArgs, waitFor } from "../kit/mod.ts";
import { DEFAULT_LIMITS, PROTOCOL, runClient } from "../../mod/egress-tunnel/mod.ts";
import { RawWs } from "./raw_ws.ts";
import { startGuestEnd, viaProxy } from "./fixture.ts";

const TOKEN = "attack-test-token";
const HELLO = JSON.stringify({ type: "hello", protocol: PROTOCOL });

function frame(type: number, stream: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(5 + payload.length);
  out[0] = type;
  new DataView(out.buffer).setUint32(1, stream);
  out.set(payload, 5);
  return out;
}

Deno.test("the WebSocket refuses an upgrade without the token, or with another token", async () => {
  const guest = startGuestEnd(TOKEN);
  try {
    const tries: Record<string, string>[] = [{}, { authorization: "Bearer not-the-token" }];
    for (const headers of tries) {
      const ws = await RawWs.connect(guest.ws, headers);
      assertEquals(ws.status, 401);
      ws.close();
    }
    assertEquals(guest.hub.attached, false);
  } finally {
    await guest.close();
  }
});

Deno.test("a hello with another protocol version is answered with the reason and closed, never attached", async () => {
  const guest = startGuestEnd(TOKEN);
  try {
    const ws = await RawWs.connect(guest.ws, { authorization: `Bearer ${TOKEN}` });
    assertEquals(ws.status, 101);
    await ws.send(1, JSON.stringify({ type: "hello", protocol: "box-egress-v2" }));
    const answer = await ws.read();
    assertStringIncludes(new TextDecoder().decode(answer!.payload), "box-egress-v2");
    const closed = await ws.closed();
    assertEquals(closed?.code, 1002);
    assertStringIncludes(closed!.reason, "this guest speaks box-egress-v1");
    assertEquals(guest.hub.attached, false);
    ws.close();
  } finally {
    await guest.close();
  }
});

Deno.test("frames a client may not send close the connection with a reason, and the guest goes on", async () => {
  const guest = startGuestEnd(TOKEN);
  try {
    const bad: [string, Uint8Array][] = [
      ["the client may not send OPEN", frame(1, 1, new TextEncoder().encode("a:1"))],
      ["was never opened", frame(3, 77, new Uint8Array(10))],
      ["is not one of box-egress-v1's", frame(42, 1)],
      ["too short", new Uint8Array([3, 0])],
    ];
    for (const [reason, bytes] of bad) {
      const ws = await RawWs.connect(guest.ws, { authorization: `Bearer ${TOKEN}` });
      await ws.send(1, HELLO);
      assertEquals(
        JSON.parse(new TextDecoder().decode((await ws.read())!.payload)).type,
        "welcome",
      );
      await ws.send(2, bytes);
      const closed = await ws.closed();
      assertEquals(closed?.code, 1002, reason);
      assertStringIncludes(closed!.reason, reason);
      ws.close();
      await waitFor(() => !guest.hub.attached, { what: "the bad client detached" });
    }
  } finally {
    await guest.close();
  }
});

Deno.test("a flood of streams past the limit is refused with 503 while the open ones keep working", async () => {
  const guest = startGuestEnd(TOKEN);
  const held: Deno.Conn[] = [];
  const target = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (target.addr as Deno.NetAddr).port;
  (async () => {
    for await (const conn of target) held.push(conn);
  })().catch(() => {});
  const stop = new AbortController();
  const client = runClient({
    ws: guest.ws,
    token: TOKEN,
    allow: ["127.0.0.1"],
    denyPrivate: false,
    log: () => {},
    signal: stop.signal,
  });
  const tunnels: Deno.Conn[] = [];
  try {
    await waitFor(() => guest.hub.attached, { what: "attach" });
    const connect = new TextEncoder().encode(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
    for (let i = 0; i < DEFAULT_LIMITS.maxStreams; i++) {
      const conn = await Deno.connect(guest.proxy);
      await conn.write(connect);
      const buffer = new Uint8Array(256);
      const count = await conn.read(buffer);
      assertStringIncludes(new TextDecoder().decode(buffer.subarray(0, count!)), " 200 ");
      tunnels.push(conn);
    }
    const over = await viaProxy(guest.proxy, `CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`);
    assertStringIncludes(over, "503");
    assertStringIncludes(over, `${DEFAULT_LIMITS.maxStreams} streams open, its limit`);
    // An open stream still carries bytes both ways.
    await waitFor(() => held.length === DEFAULT_LIMITS.maxStreams, {
      what: "every stream's target",
    });
    await tunnels[0].write(new TextEncoder().encode("ping"));
    const echo = new Uint8Array(4);
    assertEquals(await held[0].read(echo), 4);
    assertEquals(new TextDecoder().decode(echo), "ping");
    // Once streams close, new ones are taken again.
    for (const conn of [...tunnels.splice(0), ...held.splice(0)]) conn.close();
    await waitFor(() => guest.hub.mux?.size === 0, { what: "the streams closed" });
    const conn = await Deno.connect(guest.proxy);
    await conn.write(connect);
    const buffer = new Uint8Array(256);
    const count = await conn.read(buffer);
    assertStringIncludes(new TextDecoder().decode(buffer.subarray(0, count!)), " 200 ");
    conn.close();
  } finally {
    for (const conn of [...tunnels, ...held]) {
      try {
        conn.close();
      } catch {
        // closed
      }
    }
    stop.abort();
    await client;
    target.close();
    await guest.close();
  }
});

Deno.test("a client that stops reading makes the guest hold at most one window of the stream's bytes", async () => {
  const guest = startGuestEnd(TOKEN);
  const ws = await RawWs.connect(guest.ws, { authorization: `Bearer ${TOKEN}` });
  let sent = 0;
  let sender: Promise<void> | null = null;
  try {
    await ws.send(1, HELLO);
    await ws.read(); // the welcome
    const tunnel = await Deno.connect(guest.proxy);
    await tunnel.write(new TextEncoder().encode("CONNECT example.test:443 HTTP/1.1\r\n\r\n"));
    const open = (await ws.read())!;
    assertEquals(open.payload[0], 1); // OPEN
    const id = new DataView(open.payload.buffer).getUint32(1);
    await ws.send(2, frame(2, id)); // OPEN_OK, and from here on this client reads nothing
    const answer = new Uint8Array(256);
    const count = await tunnel.read(answer);
    assertStringIncludes(new TextDecoder().decode(answer.subarray(0, count!)), " 200 ");
    const total = 64 * 1024 * 1024;
    const chunk = new Uint8Array(64 * 1024);
    sender = (async () => {
      while (sent < total) sent += await tunnel.write(chunk);
    })().catch(() => {});
    const mux = guest.hub.mux!;
    await waitFor(() => mux.stats.bytesReadFromConns >= DEFAULT_LIMITS.window, {
      what: "the stream used its credit",
    });
    assertEquals(mux.stats.bytesReadFromConns, DEFAULT_LIMITS.window);
    // The client goes: the guest drops the stream, and the sender, stalled, fails.
    ws.close();
    await sender;
    assert(sent < total, `the sender wrote all ${total} bytes: the guest buffered them`);
    assertEquals(mux.stats.bytesReadFromConns, DEFAULT_LIMITS.window);
    await waitFor(() => !guest.hub.attached, { what: "detach" });
    tunnel.close();
  } finally {
    ws.close();
    await sender;
    await guest.close();
  }
});

Deno.test("gurt egress-tunnel with a wrong token says it cannot attach, and why, and tries again", async () => {
  const guest = startGuestEnd(TOKEN);
  const dir = await Deno.makeTempDir({ prefix: "gurt-eg-client-" });
  await Deno.writeTextFile(`${dir}/token`, "not-the-token\n");
  const child = new Deno.Command(Deno.execPath(), {
    args: gurtArgs(["egress-tunnel", "--ws", guest.ws, "--token-file", `${dir}/token`]),
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  const reading = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) text += chunk;
  })();
  try {
    await waitFor(() => text.includes("reconnecting in"), {
      ms: 30_000,
      what: "a retry",
      seen: () => text,
    });
    assertStringIncludes(text, `cannot attach to ${guest.ws}: HTTP 401`);
    assertStringIncludes(text, "see runbook.md#egress-tunnel-cannot-attach");
    assert(!text.includes("not-the-token"), "the token reached the client's output");
    assertEquals(guest.hub.attached, false);
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await reading.catch(() => {});
    await guest.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * The model endpoint's socket and its end: the socket is the owner's alone (0600), and close() ends
 * every request under way (a stream the service still holds, a body the client never finishes)
 * rather than waiting for them, says nothing of them in its log, and removes the socket.
 */
import { assert, assertEquals } from "../assert.ts";
import { serveModelEndpoint } from "../../mod/model-proxy/mod.ts";
import { anthropicEvents, startFakeService, streamed } from "./fake_services.ts";
import { gate } from "./proxy_kit.ts";

Deno.test("close() ends a stream the service holds and a body the client never finishes", async () => {
  const dir = await Deno.makeTempDir();
  const socketPath = `${dir}/model.sock`;
  const logged: string[] = [];
  const held = gate();
  const service = startFakeService(() =>
    streamed([anthropicEvents("claude-sonnet-4-5", ["a"])[0], "rest"], [held.promise])
  );
  const proxy = await serveModelEndpoint({
    socketPath,
    services: {
      anthropic: { baseUrl: service.url, key: () => "k" },
      openai: { baseUrl: service.url, key: () => "k" },
    },
    onUsage: () => Promise.resolve(),
    onBlocked: () => Promise.resolve(),
    log: (line) => logged.push(line),
  });
  try {
    assertEquals((await Deno.stat(socketPath)).mode! & 0o777, 0o600);
    const head = "POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: p\r\n" +
      "anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\n";
    // A stream: its first event arrives, the rest is held by the service.
    const streaming = await Deno.connect({ transport: "unix", path: socketPath });
    const body = JSON.stringify({ model: "claude-sonnet-4-5", stream: true, messages: [] });
    await streaming.write(
      new TextEncoder().encode(`${head}content-length: ${body.length}\r\n\r\n${body}`),
    );
    const seen = await readUntil(streaming, "message_start");
    assert(seen.startsWith("HTTP/1.1 200"), seen);
    // A body promised 1000 bytes long, of which 10 are sent.
    const stuck = await Deno.connect({ transport: "unix", path: socketPath });
    await stuck.write(new TextEncoder().encode(`${head}content-length: 1000\r\n\r\n{"model":`));
    // The second request holds a slot as soon as its head is read; nothing else says it was.
    while (proxy.active < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    await proxy.close();
    assertEquals(proxy.active, 0);
    assertEquals(await Deno.stat(socketPath).then(() => true, () => false), false);
    streaming.close();
    stuck.close();
  } finally {
    held.open();
    await proxy.close();
    await service.close();
    await Deno.remove(dir, { recursive: true });
  }
  assertEquals(logged, []);
});

async function readUntil(conn: Deno.Conn, part: string): Promise<string> {
  const buffer = new Uint8Array(4096);
  let text = "";
  while (!text.includes(part)) {
    const read = await conn.read(buffer);
    if (read === null) break;
    text += new TextDecoder().decode(buffer.subarray(0, read));
  }
  return text;
}

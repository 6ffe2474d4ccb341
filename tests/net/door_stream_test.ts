/**
 * A guarded door streams an answer as it is made, whatever its pace: a body whose chunks come as
 * fast as they are asked for (a file, a generator) is sent from its start, not gathered whole in
 * the core's memory before its first byte goes; and a client that reads slowly holds the maker
 * back (backpressure). Real sockets, the door's own server.
 */
import { assert, assertEquals } from "../assert.ts";
import { serveGuarded } from "../../mod/net/mod.ts";

const CHUNK = new Uint8Array(64 * 1024).fill(7);
const TOTAL = 48 * 1024 * 1024;

Deno.test("an answer made as fast as it is read goes from its start, and a slow reader holds it back", async () => {
  let made = 0;
  const server = serveGuarded({ hostname: "127.0.0.1", port: 0 }, () =>
    new Response(
      new ReadableStream<Uint8Array>({
        pull(controller) {
          if (made >= TOTAL) return controller.close();
          made += CHUNK.byteLength;
          controller.enqueue(CHUNK);
        },
      }),
    ), { name: "test door", log: () => {} });
  try {
    const { port } = server.addr as Deno.NetAddr;
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    const reader = answer.body!.getReader();
    const first = await reader.read();
    assert(!first.done && first.value.byteLength > 0, "no first chunk");
    const madeAtFirstByte = made;
    assert(
      madeAtFirstByte < TOTAL / 4,
      `${madeAtFirstByte} of ${TOTAL} bytes were made before the first one reached the client`,
    );
    // The client stops reading for a while: the door makes no more than the sockets hold.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert(made < TOTAL / 2, `${made} of ${TOTAL} bytes made while the client read nothing`);
    let got = first.value.byteLength;
    while (true) {
      const next = await reader.read();
      if (next.done) break;
      got += next.value.byteLength;
    }
    assertEquals(got, TOTAL);
  } finally {
    await server.close();
  }
});

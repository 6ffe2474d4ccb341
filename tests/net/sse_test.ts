/**
 * sseData, the reader of server-sent events that gurt's worker and the core's usage meter use:
 * events split across chunks anywhere (a CRLF too) are read whole, and a long line costs time in
 * proportion to its length, not to its length times the number of chunks it came in.
 */
import { assert, assertEquals } from "../assert.ts";
import { sseData } from "../../mod/net/mod.ts";

/** A body that sends `chunks` one by one. */
function body(chunks: Iterable<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = chunks[Symbol.iterator]();
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
  });
}

async function read(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  for await (const data of sseData(stream)) out.push(data);
  return out;
}

Deno.test("sseData reads each event's data whole, however the chunks cut it", async () => {
  const text =
    'event: a\r\ndata: {"x":1}\r\n\r\n: a comment\ndata: one\ndata: two\n\ndata: [DONE]\n\n';
  const expected = ['{"x":1}', "one\ntwo", "[DONE]"];
  assertEquals(await read(body([text])), expected);
  for (let cut = 1; cut < text.length; cut++) {
    assertEquals(await read(body([text.slice(0, cut), text.slice(cut)])), expected, `cut ${cut}`);
  }
  assertEquals(await read(body([...text])), expected, "one character at a time");
});

Deno.test("sseData reads a 16 MiB line sent in 8 KiB chunks in time linear in its length", async () => {
  const chunk = "x".repeat(8 * 1024);
  const count = 2048;
  function* chunks(): Generator<string> {
    yield "data: ";
    for (let i = 0; i < count; i++) yield chunk;
    yield "\n\n";
  }
  const started = performance.now();
  const events = await read(body(chunks()));
  const seconds = (performance.now() - started) / 1000;
  assertEquals(events.length, 1);
  assertEquals(events[0].length, chunk.length * count);
  assert(seconds < 3, `16 MiB of one line took ${seconds.toFixed(1)} s`);
});

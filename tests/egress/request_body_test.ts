/** Where a forwarded request's body ends: by its length, or by its chunks, however it is cut. */
import { assertEquals } from "../assert.ts";
import { BodyEnd, bodyFraming } from "../../mod/egress/request_body.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

/** Feeds `text` to a BodyEnd in pieces of `step` bytes; returns how many bytes it took. */
function taken(end: BodyEnd, text: string, step: number): number {
  const all = bytes(text);
  let total = 0;
  for (let at = 0; at < all.length && !end.done && !end.bad; at += step) {
    const piece = all.subarray(at, Math.min(at + step, all.length));
    const count = end.take(piece);
    total += count;
    if (count < piece.length) break;
  }
  return total;
}

Deno.test("the framing is read from the headers; both, another coding or a bad length are problems", () => {
  assertEquals(bodyFraming([]), null);
  assertEquals(bodyFraming([["Content-Length", "12"]]), { length: 12 });
  assertEquals(bodyFraming([["content-length", "5, 5"]]), { length: 5 });
  assertEquals(bodyFraming([["Transfer-Encoding", "chunked"]]), { chunked: true });
  for (
    const fields of [
      [["Content-Length", "1"], ["Transfer-Encoding", "chunked"]],
      [["Transfer-Encoding", "gzip, chunked"]],
      [["Content-Length", "5, 6"]],
      [["Content-Length", "-1"]],
    ] as [string, string][][]
  ) {
    assertEquals("problem" in (bodyFraming(fields) ?? {}), true, JSON.stringify(fields));
  }
});

Deno.test("a body ends after its length, and one without framing at once", () => {
  for (const step of [1, 3, 100]) {
    assertEquals(taken(new BodyEnd({ length: 5 }), "helloGET / HTTP/1.1", step), 5);
  }
  const none = new BodyEnd(null);
  assertEquals([none.done, none.take(bytes("GET /"))], [true, 0]);
});

Deno.test("a chunked body ends after its last chunk and trailers, however its bytes are cut", () => {
  const body =
    "4;ext=1\r\nWiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nTrailer: x\r\n\r\n";
  for (const step of [1, 2, 7, 1000]) {
    const end = new BodyEnd({ chunked: true });
    assertEquals(
      taken(end, `${body}GET /next HTTP/1.1\r\n\r\n`, step),
      body.length,
      `step ${step}`,
    );
    assertEquals(end.done, true);
  }
  const bad = new BodyEnd({ chunked: true });
  bad.take(bytes("zz\r\n"));
  assertEquals(bad.bad, true);
});

/**
 * The frame codec and the mux against arbitrary bytes: a frame round-trips, and no message a
 * client can send makes the guest's side throw; a bad one closes the connection with a reason.
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import {
  checkHello,
  decodeFrame,
  DEFAULT_LIMITS,
  encodeFrame,
  FrameError,
  type FrameTypeNumber,
} from "../../mod/egress-tunnel/frames.ts";
import { Mux } from "../../mod/egress-tunnel/mux.ts";

Deno.test("a frame decodes to what was encoded", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 0xffffffff }),
      fc.uint8Array({ maxLength: 300 }),
      (type, stream, payload) => {
        const body = type === 4 ? payload.slice(0, 4) : payload;
        if (type === 4 && body.length !== 4) return;
        const frame = decodeFrame(encodeFrame(type as FrameTypeNumber, stream, body), 1024);
        assertEquals([frame.type, frame.stream, [...frame.payload]], [type, stream, [...body]]);
      },
    ),
    { verbose: true },
  );
});

Deno.test("arbitrary bytes are a frame or a FrameError, and arbitrary text a hello or a reason", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), fc.string({ maxLength: 64 }), (bytes, text) => {
      try {
        decodeFrame(bytes, 16);
      } catch (error) {
        assert(error instanceof FrameError, String(error));
      }
      const hello = checkHello(text);
      assert(hello.ok || hello.reason.length > 0);
    }),
    { verbose: true },
  );
});

Deno.test("no sequence of messages from a client makes the guest's mux throw; a bad one closes it with a reason", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.tuple(
          fc.integer({ min: 0, max: 9 }),
          fc.integer({ min: 0, max: 3 }),
          fc.uint8Array({ maxLength: 12 }),
        ),
        { maxLength: 12 },
      ),
      (messages) => {
        const closes: string[] = [];
        const socket = {
          bufferedAmount: 0,
          send: () => {},
          close: (_code?: number, reason?: string) => closes.push(reason ?? ""),
        };
        const mux = new Mux(socket, DEFAULT_LIMITS, {}, true);
        try {
          for (const [type, stream, payload] of messages) {
            const bytes = new Uint8Array(5 + payload.length);
            bytes[0] = type;
            new DataView(bytes.buffer).setUint32(1, stream);
            bytes.set(payload, 5);
            mux.receive(bytes);
          }
          if (mux.closed) {
            assert(closes.length === 1 && closes[0].length > 0, "closed without a reason");
          }
        } finally {
          mux.close();
        }
      },
    ),
    { verbose: true },
  );
});

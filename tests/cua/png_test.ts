import fc from "fast-check";
import { inflateSync } from "node:zlib";
import { assertEquals } from "../assert.ts";
import { encodePng, pngSize } from "../../mod/cua/png.ts";

/** Decodes the RGB pixels of one of our PNGs (one IDAT, Sub filter), independently of the encoder. */
function decodeRgb(png: Uint8Array): { width: number; height: number; rgb: Uint8Array } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const { width, height } = pngSize(png);
  let offset = 8;
  const idat: number[] = [];
  while (offset < png.length) {
    const length = view.getUint32(offset);
    const type = new TextDecoder().decode(png.subarray(offset + 4, offset + 8));
    if (type === "IDAT") idat.push(...png.subarray(offset + 8, offset + 8 + length));
    offset += 12 + length;
  }
  const raw = new Uint8Array(inflateSync(new Uint8Array(idat)));
  const rgb = new Uint8Array(width * height * 3);
  const stride = width * 3 + 1;
  for (let y = 0; y < height; y++) {
    assertEquals(raw[y * stride], 1, "Sub filter");
    for (let i = 0; i < width * 3; i++) {
      const left = i >= 3 ? rgb[y * width * 3 + i - 3] : 0;
      rgb[y * width * 3 + i] = (raw[y * stride + 1 + i] + left) & 0xff;
    }
  }
  return { width, height, rgb };
}

Deno.test("a BGRX frame encodes to a PNG whose pixels decode back to the same RGB", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 17 }),
      fc.integer({ min: 1, max: 9 }),
      fc.infiniteStream(fc.integer({ min: 0, max: 255 })),
      (width, height, bytes) => {
        const bgrx = new Uint8Array(width * height * 4);
        const it = bytes[Symbol.iterator]();
        for (let i = 0; i < bgrx.length; i++) bgrx[i] = it.next().value as number;
        const decoded = decodeRgb(encodePng(bgrx, { width, height }));
        assertEquals([decoded.width, decoded.height], [width, height]);
        for (let p = 0; p < width * height; p++) {
          assertEquals(
            [...decoded.rgb.subarray(p * 3, p * 3 + 3)],
            [bgrx[p * 4 + 2], bgrx[p * 4 + 1], bgrx[p * 4]],
          );
        }
      },
    ),
  );
});

Deno.test("a frame shorter than its size is refused with the sizes named", () => {
  let message = "";
  try {
    encodePng(new Uint8Array(10), { width: 4, height: 4 });
  } catch (error) {
    message = (error as Error).message;
  }
  assertEquals(message, "the frame holds 10 bytes, fewer than 4x4x4");
});

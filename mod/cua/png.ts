/** PNG encoding of an X ZPixmap frame (32 bits a pixel, BGRX): RGB rows, Sub filter, zlib. Pure. */
import { deflateSync } from "node:zlib";

const SIGNATURE = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Encodes a BGRX frame of `width` x `height` pixels as an RGB PNG. */
export function encodePng(
  bgrx: Uint8Array,
  size: { width: number; height: number },
): Uint8Array<ArrayBuffer> {
  const { width, height } = size;
  if (bgrx.length < width * height * 4) {
    throw new Error(`the frame holds ${bgrx.length} bytes, fewer than ${width}x${height}x4`);
  }
  const stride = width * 3 + 1;
  const raw = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    let o = y * stride;
    raw[o++] = 1; // Sub filter
    let i = y * width * 4;
    let pr = 0, pg = 0, pb = 0;
    for (let x = 0; x < width; x++, i += 4) {
      const r = bgrx[i + 2], g = bgrx[i + 1], b = bgrx[i];
      raw[o++] = (r - pr) & 0xff;
      raw[o++] = (g - pg) & 0xff;
      raw[o++] = (b - pb) & 0xff;
      pr = r;
      pg = g;
      pb = b;
    }
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type RGB
  const idat = deflateSync(raw, { level: 3 });
  return concat([
    SIGNATURE,
    chunk("IHDR", header),
    chunk("IDAT", new Uint8Array(idat.buffer, idat.byteOffset, idat.byteLength)),
    chunk("IEND", new Uint8Array(0)),
  ]);
}

/** Reads the width and height from a PNG's IHDR. */
export function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

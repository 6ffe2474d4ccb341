/**
 * A WebSocket (RFC 6455) over a TCP connection of our own, both sides: the guest's listener and
 * the laptop's dialer. Deno's own WebSocket leaves Nagle's algorithm on and gives no backpressure;
 * the tunnel's small control frames then wait on delayed ACKs (≈ 40 ms each). Here the socket has
 * TCP_NODELAY, every frame queued in one turn goes out in one write, and `bufferedAmount` is what
 * is queued and not yet written.
 */
import { createHash, randomBytes } from "node:crypto";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A message as the socket delivers it. */
export type WsMessage = string | Uint8Array;

/** One WebSocket over one connection. */
export class WsConn {
  onmessage: (data: WsMessage) => void = () => {};
  onclose: (code: number, reason: string) => void = () => {};
  #queue: Uint8Array[] = [];
  #queued = 0;
  #writing = false;
  #closed = false;
  #buffer: Uint8Array;

  constructor(
    private readonly conn: Deno.Conn,
    private readonly masks: boolean,
    private readonly maxMessage: number,
    leftover: Uint8Array = new Uint8Array(0),
  ) {
    this.#buffer = leftover;
    this.#readLoop();
  }

  /** Bytes queued and not yet written. */
  get bufferedAmount(): number {
    return this.#queued;
  }

  /** Queues one message. */
  send(data: WsMessage): void {
    if (this.#closed) return;
    const text = typeof data === "string";
    this.#push(text ? 1 : 2, text ? encoder.encode(data) : data);
  }

  /** Sends a close frame and ends the connection once it is written. */
  close(code = 1000, reason = ""): void {
    if (this.#closed) return;
    const why = encoder.encode(reason).subarray(0, 120);
    const payload = new Uint8Array(2 + why.length);
    new DataView(payload.buffer).setUint16(0, code);
    payload.set(why, 2);
    this.#push(8, payload);
    this.#closed = true;
    this.#closeWith = { code, reason };
    if (!this.#writing) this.#end(code, reason);
  }

  #closeWith: { code: number; reason: string } | null = null;

  #push(opcode: number, payload: Uint8Array): void {
    const length = payload.length;
    const extra = length < 126 ? 0 : length < 65536 ? 2 : 8;
    const maskBytes = this.masks ? 4 : 0;
    const out = new Uint8Array(2 + extra + maskBytes + length);
    out[0] = 0x80 | opcode;
    const view = new DataView(out.buffer);
    if (extra === 0) out[1] = length;
    else if (extra === 2) {
      out[1] = 126;
      view.setUint16(2, length);
    } else {
      out[1] = 127;
      view.setUint32(6, length);
    }
    const at = 2 + extra;
    if (this.masks) {
      out[1] |= 0x80;
      const mask = randomBytes(4);
      out.set(mask, at);
      out.set(payload, at + 4);
      xorMask(out.subarray(at + 4), mask);
    } else out.set(payload, at);
    this.#queue.push(out);
    this.#queued += out.length;
    if (!this.#writing) this.#flush();
  }

  async #flush(): Promise<void> {
    if (this.#writing) return;
    this.#writing = true;
    try {
      while (this.#queue.length > 0) {
        const parts = this.#queue.splice(0);
        const size = parts.reduce((sum, part) => sum + part.length, 0);
        const all = parts.length === 1 ? parts[0] : new Uint8Array(size);
        if (parts.length > 1) {
          let at = 0;
          for (const part of parts) {
            all.set(part, at);
            at += part.length;
          }
        }
        let written = 0;
        while (written < all.length) written += await this.conn.write(all.subarray(written));
        this.#queued -= size;
      }
    } catch {
      this.#end(1006, "the connection failed");
    } finally {
      this.#writing = false;
      // A close waits for what was queued before it, its own frame last.
      if (this.#closeWith !== null) this.#end(this.#closeWith.code, this.#closeWith.reason);
    }
  }

  async #readLoop(): Promise<void> {
    // One store the socket is read into and frames are parsed from in place: what is unparsed is
    // moved to its start when the room behind it runs short. It holds the largest message.
    const store = new Uint8Array(this.maxMessage + 14 + 256 * 1024);
    store.set(this.#buffer);
    let start = 0;
    let end = this.#buffer.length;
    this.#buffer = store.subarray(start, end);
    let pieces: Uint8Array[] = [];
    let pieceBytes = 0;
    let opcodeOf = 0;
    try {
      for (;;) {
        const frame = this.#parse();
        if (frame === "wait") {
          start = this.#buffer.byteOffset - store.byteOffset;
          end = start + this.#buffer.length;
          if (store.length - end < 64 * 1024) {
            store.copyWithin(0, start, end);
            end -= start;
            start = 0;
          }
          const count = await this.conn.read(store.subarray(end));
          if (count === null) return this.#end(1006, "the connection ended");
          end += count;
          this.#buffer = store.subarray(start, end);
          continue;
        }
        if (frame === "bad") return this.#protocolError("a frame over the size limit or unmasked");
        const { fin, opcode, payload } = frame;
        if (opcode === 8) {
          const code = payload.length >= 2 ? new DataView(payload.buffer).getUint16(0) : 1005;
          const reason = decoder.decode(payload.subarray(2));
          if (!this.#closed) this.close(code === 1005 ? 1000 : code, reason);
          return this.#end(code, reason);
        }
        if (opcode === 9) {
          this.#push(10, payload);
          continue;
        }
        if (opcode === 10) continue;
        if (opcode !== 0 && opcode !== 1 && opcode !== 2) {
          return this.#protocolError(`WebSocket opcode ${opcode}`);
        }
        if (opcode !== 0) opcodeOf = opcode;
        pieces.push(payload);
        pieceBytes += payload.length;
        if (pieceBytes > this.maxMessage) return this.#protocolError("a message over the limit");
        if (!fin) continue;
        const whole = pieces.length === 1 ? pieces[0] : pieces.reduce(append);
        pieces = [];
        pieceBytes = 0;
        this.onmessage(opcodeOf === 1 ? decoder.decode(whole) : whole);
      }
    } catch {
      this.#end(1006, "the connection failed");
    }
  }

  #parse(): { fin: boolean; opcode: number; payload: Uint8Array } | "wait" | "bad" {
    const b = this.#buffer;
    if (b.length < 2) return "wait";
    const masked = (b[1] & 0x80) !== 0;
    if (masked === this.masks) return "bad"; // a client masks, a server does not
    let length = b[1] & 127;
    let at = 2;
    if (length === 126) {
      if (b.length < 4) return "wait";
      length = (b[2] << 8) | b[3];
      at = 4;
    } else if (length === 127) {
      if (b.length < 10) return "wait";
      const view = new DataView(b.buffer, b.byteOffset);
      if (view.getUint32(2) !== 0) return "bad";
      length = view.getUint32(6);
      at = 10;
    }
    if (length > this.maxMessage) return "bad";
    const mask = masked ? 4 : 0;
    if (b.length < at + mask + length) return "wait";
    const payload = b.slice(at + mask, at + mask + length);
    if (masked) xorMask(payload, b.subarray(at, at + 4));
    this.#buffer = b.subarray(at + mask + length);
    return { fin: (b[0] & 0x80) !== 0, opcode: b[0] & 15, payload };
  }

  #protocolError(reason: string): void {
    this.close(1002, reason);
  }

  #ended = false;
  #end(code: number, reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#closed = true;
    try {
      this.conn.close();
    } catch {
      // closed
    }
    this.onclose(code, reason);
  }
}

/** XORs bytes with a 4-byte mask in place, a 32-bit word at a time past the first aligned byte. */
function xorMask(bytes: Uint8Array, mask: Uint8Array): void {
  let i = 0;
  while (i < bytes.length && (bytes.byteOffset + i) % 4 !== 0) {
    bytes[i] ^= mask[i & 3];
    i++;
  }
  const count = (bytes.length - i) >> 2;
  if (count > 0) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset + i, count);
    const rotated = new Uint8Array(4);
    for (let k = 0; k < 4; k++) rotated[k] = mask[(i + k) & 3];
    const word = new Uint32Array(rotated.buffer)[0];
    for (let w = 0; w < count; w++) words[w] ^= word;
    i += count << 2;
  }
  for (; i < bytes.length; i++) bytes[i] ^= mask[i & 3];
}

function append(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** A request head as the listener read it. */
export interface UpgradeRequest {
  method: string;
  path: string;
  headers: Headers;
}

/** Reads an HTTP/1.1 request or response head (16 KiB at most); null when it is not one. */
export async function readHead(
  conn: Deno.Conn,
): Promise<{ lines: string[]; headers: Headers; rest: Uint8Array } | null> {
  let buffer: Uint8Array = new Uint8Array(0);
  const chunk = new Uint8Array(4096);
  while (buffer.length < 16 * 1024) {
    const count = await conn.read(chunk);
    if (count === null) return null;
    buffer = append(buffer, chunk.subarray(0, count));
    for (let i = Math.max(0, buffer.length - count - 3); i + 3 < buffer.length; i++) {
      if (
        buffer[i] === 13 && buffer[i + 1] === 10 && buffer[i + 2] === 13 && buffer[i + 3] === 10
      ) {
        const lines = decoder.decode(buffer.subarray(0, i)).split("\r\n");
        const headers = new Headers();
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(":");
          if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
        }
        return { lines, headers, rest: buffer.slice(i + 4) };
      }
    }
  }
  return null;
}

/** The Sec-WebSocket-Accept value for a key. */
export function acceptOf(key: string): string {
  return createHash("sha1").update(key + GUID).digest("base64");
}

/** Dials a ws:// or wss:// URL with headers; the socket, or the refusal's status and body. */
export async function dialWs(
  url: string,
  headers: Record<string, string>,
  maxMessage: number,
): Promise<{ ok: true; ws: WsConn } | { ok: false; reason: string }> {
  const target = new URL(url);
  const secure = target.protocol === "wss:";
  const port = Number(target.port || (secure ? 443 : 80));
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  const conn: Deno.Conn = secure
    ? await Deno.connectTls({ hostname, port })
    : await Deno.connect({ hostname, port });
  if (!secure) (conn as Deno.TcpConn).setNoDelay(true);
  const key = randomBytes(16).toString("base64");
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join("");
  const request = `GET ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\n` +
    "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
    `Sec-WebSocket-Key: ${key}\r\n${extra}\r\n`;
  await conn.write(encoder.encode(request));
  const head = await readHead(conn);
  if (head === null) {
    conn.close();
    return { ok: false, reason: "the server closed the connection without an answer" };
  }
  const status = Number(head.lines[0].split(" ")[1]);
  if (status !== 101 || head.headers.get("sec-websocket-accept") !== acceptOf(key)) {
    const body = decoder.decode(head.rest).trim().slice(0, 200);
    conn.close();
    return { ok: false, reason: `HTTP ${status}${body ? `: ${body}` : ""}` };
  }
  return { ok: true, ws: new WsConn(conn, true, maxMessage, head.rest) };
}

/**
 * A WebSocket client written by hand over a TCP socket, for the attacks: it sends exactly the
 * frames a test asks for, and reads only when the test reads (or never, for the client that stops
 * reading).
 */

/** One WebSocket message as read. */
export interface RawMessage {
  opcode: number;
  payload: Uint8Array;
}

/** A hand-made client. */
export class RawWs {
  #buffer = new Uint8Array(0);
  private constructor(
    readonly conn: Deno.TcpConn,
    readonly status: number,
    readonly head: string,
  ) {}

  /** Dials and upgrades; `status` is the answer's status (101 when upgraded). */
  static async connect(url: string, headers: Record<string, string>): Promise<RawWs> {
    const { hostname, port, pathname } = new URL(url);
    const conn = await Deno.connect({ hostname, port: Number(port) });
    const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    const request = `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
      "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n${extra}\r\n`;
    await conn.write(new TextEncoder().encode(request));
    const ws = new RawWs(conn, 0, "");
    const head = await ws.#readHead();
    const status = Number(head.split(" ")[1]);
    const made = new RawWs(conn, status, head);
    made.#buffer = ws.#buffer;
    return made;
  }

  /** Sends one masked frame. */
  async send(opcode: number, payload: Uint8Array | string): Promise<void> {
    const body = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
    const header: number[] = [0x80 | opcode];
    if (body.length < 126) header.push(0x80 | body.length);
    else if (body.length < 65536) header.push(0x80 | 126, body.length >> 8, body.length & 255);
    else {
      header.push(0x80 | 127, 0, 0, 0, 0);
      for (let shift = 24; shift >= 0; shift -= 8) header.push((body.length >>> shift) & 255);
    }
    const mask = [1, 2, 3, 4];
    const out = new Uint8Array(header.length + 4 + body.length);
    out.set(header);
    out.set(mask, header.length);
    for (let i = 0; i < body.length; i++) out[header.length + 4 + i] = body[i] ^ mask[i % 4];
    let written = 0;
    while (written < out.length) written += await this.conn.write(out.subarray(written));
  }

  /** Reads one message; null when the connection ends. */
  async read(): Promise<RawMessage | null> {
    for (;;) {
      const message = this.#parse();
      if (message !== null) return message;
      if (!await this.#more()) return null;
    }
  }

  /** Reads until a close frame (or the end); its code and reason. */
  async closed(): Promise<{ code: number; reason: string } | null> {
    for (;;) {
      const message = await this.read().catch(() => null);
      if (message === null) return null;
      if (message.opcode === 8) {
        const view = new DataView(message.payload.buffer, message.payload.byteOffset);
        return {
          code: message.payload.length >= 2 ? view.getUint16(0) : 1005,
          reason: new TextDecoder().decode(message.payload.subarray(2)),
        };
      }
    }
  }

  close(): void {
    try {
      this.conn.close();
    } catch {
      // closed
    }
  }

  #parse(): RawMessage | null {
    const b = this.#buffer;
    if (b.length < 2) return null;
    let length = b[1] & 127;
    let at = 2;
    if (length === 126) {
      if (b.length < 4) return null;
      length = (b[2] << 8) | b[3];
      at = 4;
    } else if (length === 127) {
      if (b.length < 10) return null;
      length = new DataView(b.buffer, b.byteOffset).getUint32(6);
      at = 10;
    }
    if (b.length < at + length) return null;
    const message = { opcode: b[0] & 15, payload: b.slice(at, at + length) };
    this.#buffer = b.slice(at + length);
    return message;
  }

  async #more(): Promise<boolean> {
    const chunk = new Uint8Array(65536);
    const count = await this.conn.read(chunk);
    if (count === null) return false;
    const next = new Uint8Array(this.#buffer.length + count);
    next.set(this.#buffer);
    next.set(chunk.subarray(0, count), this.#buffer.length);
    this.#buffer = next;
    return true;
  }

  async #readHead(): Promise<string> {
    for (;;) {
      const text = new TextDecoder().decode(this.#buffer);
      const end = text.indexOf("\r\n\r\n");
      if (end >= 0) {
        this.#buffer = this.#buffer.slice(end + 4);
        return text.slice(0, end);
      }
      if (!await this.#more()) return text;
    }
  }
}

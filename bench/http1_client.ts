/**
 * A minimal HTTP/1.1 client on one kept-alive TCP connection, as curl or an SDK keeps one: it
 * sends a request and reads one response with a Content-Length. It lets a benchmark measure the
 * server's path without the cost of `fetch`'s own Request and Response machinery.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HEADER_END = encoder.encode("\r\n\r\n");

/** One response: status and body text. */
export interface Http1Answer {
  status: number;
  body: string;
}

/** One kept-alive connection; requests are sent one at a time. */
export class Http1Client {
  private buffer = new Uint8Array(64 * 1024);
  private filled = 0;

  private constructor(private readonly conn: Deno.TcpConn, private readonly host: string) {}

  /** Connects to `http://host:port`. */
  static async connect(url: string): Promise<Http1Client> {
    const { hostname, port } = new URL(url);
    const conn = await Deno.connect({ hostname, port: Number(port) });
    conn.setNoDelay(true);
    return new Http1Client(conn, `${hostname}:${port}`);
  }

  /** Sends one request and reads its whole response. */
  async request(
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: string } = {},
  ): Promise<Http1Answer> {
    const body = encoder.encode(options.body ?? "");
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.host}\r\n`;
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      head += `${name}: ${value}\r\n`;
    }
    head += `content-length: ${body.byteLength}\r\n\r\n`;
    const request = new Uint8Array(head.length + body.byteLength);
    encoder.encodeInto(head, request);
    request.set(body, head.length);
    for (let sent = 0; sent < request.byteLength;) {
      sent += await this.conn.write(request.subarray(sent));
    }
    return await this.readResponse();
  }

  /** Closes the connection. */
  close(): void {
    this.conn.close();
  }

  private async readResponse(): Promise<Http1Answer> {
    for (;;) {
      const end = indexOf(this.buffer.subarray(0, this.filled), HEADER_END);
      if (end >= 0) {
        const head = decoder.decode(this.buffer.subarray(0, end));
        const status = Number(head.slice(9, 12));
        const length = /\r\ncontent-length:\s*([0-9]+)/i.exec(head);
        if (length === null) throw new Error(`a response without Content-Length:\n${head}`);
        const total = end + 4 + Number(length[1]);
        if (this.filled >= total) {
          const text = decoder.decode(this.buffer.subarray(end + 4, total));
          this.buffer.copyWithin(0, total, this.filled);
          this.filled -= total;
          return { status, body: text };
        }
      }
      if (this.filled === this.buffer.byteLength) {
        const bigger = new Uint8Array(this.buffer.byteLength * 2);
        bigger.set(this.buffer);
        this.buffer = bigger;
      }
      const read = await this.conn.read(this.buffer.subarray(this.filled));
      if (read === null) throw new Error("the server closed the connection");
      this.filled += read;
    }
  }
}

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

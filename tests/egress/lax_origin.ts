/**
 * A loopback origin that reads requests as a lax server does, for the smuggling tests: bare LF as a
 * line's end, the first Host, chunked over Content-Length, any two bytes after a chunk's data, one
 * line after the last chunk, and the next request read from what is already there.
 */

/** An origin that reads requests as a lax server does, and what it read. */
export interface LaxOrigin {
  port: number;
  /** Connections accepted. */
  connections: number;
  /** Bytes received on all of them. */
  bytes: number;
  /** Each request it read: `METHOD path host=<its first Host>`. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A raw TCP origin on 127.0.0.1 that splits a head on /\r?\n/, takes the first Host header, frames
 * a body by Transfer-Encoding: chunked over Content-Length, answers each request 200 and reads the
 * next from what is already there, closing the connection after a request that says
 * Connection: close. With `http10Chunked` false it frames an HTTP/1.0 request by Content-Length
 * alone, as a server that knows HTTP/1.0 has no Transfer-Encoding does.
 */
export function startLaxOrigin(options: { http10Chunked?: boolean } = {}): LaxOrigin {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  const origin: LaxOrigin = {
    port: (listener.addr as Deno.NetAddr).port,
    connections: 0,
    bytes: 0,
    requests: [],
    async close() {
      listener.close();
      for (const conn of open) conn.close();
      await loop;
    },
  };
  const serve = async (conn: Deno.Conn) => {
    let buffered = "";
    const buffer = new Uint8Array(16 * 1024);
    try {
      for (;;) {
        const read = await conn.read(buffer);
        if (read === null) break;
        origin.bytes += read;
        buffered += String.fromCharCode(...buffer.subarray(0, read));
        let close = false;
        for (;;) {
          const request = laxRequest(buffered, options.http10Chunked ?? true);
          if (request === null) break;
          origin.requests.push(request.line);
          close ||= request.close;
          buffered = buffered.slice(request.length);
          await conn.write(
            new TextEncoder().encode("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
          );
        }
        if (close) break;
      }
    } catch {
      // Closed.
    }
    open.delete(conn);
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  };
  const loop = (async () => {
    try {
      for await (const conn of listener) {
        origin.connections++;
        open.add(conn);
        void serve(conn);
      }
    } catch {
      // Closed.
    }
  })();
  return origin;
}

/** The first whole request in `text` as a lax server reads it, and its length; null if none yet. */
function laxRequest(
  text: string,
  http10Chunked: boolean,
): { line: string; length: number; close: boolean } | null {
  const end = /\r?\n\r?\n/.exec(text);
  if (end === null) return null;
  const [first, ...fields] = text.slice(0, end.index).split(/\r?\n/);
  const value = (name: string) =>
    fields.find((field) => field.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1)
      .trim();
  const [method, path] = first.split(" ");
  let at = end.index + end[0].length;
  const http10 = first.endsWith(" HTTP/1.0");
  if ((http10Chunked || !http10) && value("transfer-encoding")?.toLowerCase() === "chunked") {
    for (;;) {
      const sizeEnd = text.indexOf("\n", at);
      if (sizeEnd === -1) return null;
      const size = parseInt(text.slice(at, sizeEnd), 16);
      at = sizeEnd + 1;
      if (size === 0) {
        const trailerEnd = text.indexOf("\n", at);
        if (trailerEnd === -1) return null;
        at = trailerEnd + 1;
        break;
      }
      at += size + 2;
      if (at > text.length) return null;
    }
  } else {
    at += Number(value("content-length") ?? 0);
    if (at > text.length) return null;
  }
  return {
    line: `${method} ${path} host=${value("host")}`,
    length: at,
    close: value("connection")?.toLowerCase() === "close",
  };
}

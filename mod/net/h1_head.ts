/**
 * An HTTP/1.1 request's head, read strictly (RFC 9112): the request line, the header fields, and
 * what frames the body. A head that is not that is refused with the status and the sentence its
 * `{error}` answer carries; nothing is guessed (no folded lines, no bare LF, no field with a
 * control character, no request with both a length and chunked coding, no length given twice
 * differently), so that the door and whatever reads the request after it agree on where the body
 * ends.
 */

/** A refusal of a head: its status (400, 405, 431, 501) and the sentence. */
export class HeadError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = "HeadError";
  }
}

/** A head read whole. */
export interface RequestHead {
  method: string;
  target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: number;
  /**
   * The header fields as they came, name and value (a Request made from pairs costs half what
   * one made from a Headers does).
   */
  headers: [string, string][];
  /** The body's length; -1 when it is chunked; 0 when there is none. */
  length: number;
  /** Whether the connection stays open after the answer, as the client asked. */
  keepAlive: boolean;
  /** `Expect: 100-continue` from an HTTP/1.1 client. */
  expectsContinue: boolean;
  host: string | null;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// deno-lint-ignore no-control-regex -- a request target holds no control character or space
const REQUEST_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+) ([^\x00-\x20\x7f]+) HTTP\/1\.([01])$/;
/** A field value: visible characters, spaces, tabs and obs-text; no other control character. */
// deno-lint-ignore no-control-regex -- these are the characters refused
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
const ascii = new TextDecoder();

/** The head's bytes (without the blank line that ends it) as text, one character per byte. */
export function headText(bytes: Uint8Array): string {
  for (let at = 0; at < bytes.length; at++) {
    if (bytes[at] >= 0x80) {
      let text = "";
      for (let from = 0; from < bytes.length; from += 4096) {
        text += String.fromCharCode(...bytes.subarray(from, from + 4096));
      }
      return text;
    }
  }
  return ascii.decode(bytes);
}

/** Reads a head's text; throws HeadError for one that is not HTTP/1.1 as gurt reads it. */
export function parseHead(text: string): RequestHead {
  const lines = text.split("\r\n");
  const line = REQUEST_LINE.exec(lines[0]);
  if (line === null) {
    throw new HeadError(
      400,
      `the request line ${JSON.stringify(lines[0].slice(0, 80))} is not HTTP/1.1`,
    );
  }
  const [, method, target, minorText] = line;
  const minor = Number(minorText);
  const headers: [string, string][] = [];
  let length = 0;
  let lengthText: string | null = null;
  let chunked = false;
  let connection = "";
  let expectsContinue = false;
  let host: string | null = null;
  for (let at = 1; at < lines.length; at++) {
    const field = lines[at];
    const colon = field.indexOf(":");
    const name = colon > 0 ? field.slice(0, colon) : "";
    if (!TOKEN.test(name)) {
      throw new HeadError(
        400,
        `the header line ${JSON.stringify(field.slice(0, 80))} is not a field`,
      );
    }
    // Only OWS (SP and HTAB, RFC 9110 5.6.3) is trimmed: trim() would also take VT, FF and
    // NBSP (the head is read as Latin-1), so `Content-Length: 0\x0b` would pass as 0.
    const value = trimOws(field, colon + 1);
    if (BAD_VALUE.test(value)) {
      throw new HeadError(400, `the header ${name} holds a control character`);
    }
    headers.push([name, value]);
    switch (name.length) {
      case 4:
        if (name.toLowerCase() === "host") {
          if (host !== null) throw new HeadError(400, "the request has more than one Host header");
          host = value;
        }
        break;
      case 6:
        // An HTTP/1.0 client does not know 100 Continue (RFC 9110 10.1.1): its Expect is ignored.
        if (name.toLowerCase() === "expect") {
          expectsContinue = minor === 1 && /^100-continue$/i.test(value);
        }
        break;
      case 10:
        if (name.toLowerCase() === "connection") connection += `,${value.toLowerCase()}`;
        break;
      case 14:
        if (name.toLowerCase() === "content-length") {
          if (!/^[0-9]{1,15}$/.test(value) || (lengthText !== null && lengthText !== value)) {
            throw new HeadError(
              400,
              `the request's Content-Length ${JSON.stringify(value)} is not one length`,
            );
          }
          lengthText = value;
          length = Number(value);
        }
        break;
      case 17:
        if (name.toLowerCase() === "transfer-encoding") {
          if (chunked || value.toLowerCase() !== "chunked") {
            throw new HeadError(
              501,
              `the transfer coding ${
                JSON.stringify(value.slice(0, 40))
              } is not served here; send chunked or a Content-Length`,
            );
          }
          chunked = true;
        }
        break;
    }
  }
  if (host === null && minor === 1) {
    throw new HeadError(400, "the HTTP/1.1 request has no Host header");
  }
  if (chunked) {
    if (lengthText !== null || minor === 0) {
      throw new HeadError(400, "the request has both a Content-Length and chunked coding");
    }
    length = -1;
  }
  const tokens = connection.split(",").map((token) => token.trim());
  const keepAlive = minor === 1 ? !tokens.includes("close") : tokens.includes("keep-alive");
  return { method, target, minor, headers, length, keepAlive, expectsContinue, host };
}

/** `field` from `from`, without the spaces and tabs at either end. */
function trimOws(field: string, from: number): string {
  let start = from;
  let end = field.length;
  while (start < end && (field.charCodeAt(start) === 0x20 || field.charCodeAt(start) === 0x09)) {
    start++;
  }
  while (
    end > start && (field.charCodeAt(end - 1) === 0x20 || field.charCodeAt(end - 1) === 0x09)
  ) {
    end--;
  }
  return field.slice(start, end);
}

/** The request's URL: the absolute form as it is, else the host and the path joined as they came. */
export function requestUrl(target: string, host: string | null): string {
  // A client that takes the socket for a proxy (Deno's fetch with a Unix-socket client) sends
  // the absolute form, `http://task/v1/messages`.
  if (/^https?:\/\//i.test(target)) return new URL(target).href;
  if (!target.startsWith("/")) {
    throw new Error(`the request target ${JSON.stringify(target.slice(0, 80))} is not a path`);
  }
  // As Deno.serve did: a Host that carries a path is part of the path checked and sent; a
  // target `//evil.example/x` is that path, not another host.
  return new URL(`http://${host ?? "localhost"}${target}`).href;
}

/** The reason phrase of a status, as node:http sends it. */
export function reasonOf(status: number): string {
  return REASONS[status] ?? "Unknown";
}

const REASONS: Record<number, string> = {
  100: "Continue",
  101: "Switching Protocols",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  206: "Partial Content",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  416: "Range Not Satisfiable",
  422: "Unprocessable Entity",
  425: "Too Early",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  507: "Insufficient Storage",
};

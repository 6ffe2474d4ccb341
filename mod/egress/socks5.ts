/**
 * SOCKS5 (RFC 1928) as far as the proxy speaks it, read without I/O: the greeting, where only "no
 * authentication" (0x00) is taken, and a CONNECT request to a host name (ATYP 0x03, what socks5h://
 * clients send) or to an IPv4 or IPv6 address (0x01, 0x04), which the proxy lets through only if
 * the address itself is listed.
 */

/** The first byte of every SOCKS5 message from a client. */
export const SOCKS_VERSION = 0x05;

/** The reply codes the proxy sends. */
export const SOCKS_REPLY = {
  succeeded: 0x00,
  notAllowed: 0x02,
  hostUnreachable: 0x04,
  refused: 0x05,
  commandNotSupported: 0x07,
  addressTypeNotSupported: 0x08,
} as const;

/** What more of a message is needed, as a count of bytes in all. */
export type Need = { need: number };

/** A greeting: the methods the client offers, and its length in bytes. */
export type Greeting = { methods: number[]; length: number };

/** A request: its command, the target as text (an address or a name) and port, and its length. */
export type SocksRequest = {
  command: number;
  addressType: 1 | 3 | 4;
  host: string;
  port: number;
  length: number;
};

/** Reads a greeting from the start of `bytes`. */
export function readGreeting(bytes: Uint8Array): Greeting | Need | { problem: string } {
  if (bytes.length < 2) return { need: 2 };
  if (bytes[0] !== SOCKS_VERSION) return { problem: "not SOCKS version 5" };
  const length = 2 + bytes[1];
  if (bytes.length < length) return { need: length };
  return { methods: [...bytes.subarray(2, length)], length };
}

/** Reads a request from the start of `bytes`. */
export function readRequest(bytes: Uint8Array): SocksRequest | Need | { problem: string } {
  if (bytes.length < 5) return { need: 5 };
  if (bytes[0] !== SOCKS_VERSION || bytes[2] !== 0) return { problem: "not a SOCKS5 request" };
  const addressType = bytes[3];
  let hostEnd: number;
  if (addressType === 1) hostEnd = 4 + 4;
  else if (addressType === 4) hostEnd = 4 + 16;
  else if (addressType === 3) hostEnd = 5 + bytes[4];
  else return { problem: "an unknown address type" };
  const length = hostEnd + 2;
  if (bytes.length < length) return { need: length };
  const port = (bytes[hostEnd] << 8) | bytes[hostEnd + 1];
  let host: string;
  if (addressType === 1) {
    host = [...bytes.subarray(4, 8)].join(".");
  } else if (addressType === 4) {
    const words: string[] = [];
    for (let i = 4; i < 20; i += 2) words.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
    host = `[${words.join(":")}]`;
  } else {
    try {
      host = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(5, hostEnd));
    } catch {
      return { problem: "a host name that is not UTF-8" };
    }
  }
  if (port === 0) return { problem: "port 0" };
  return { command: bytes[1], addressType, host, port, length };
}

/** A reply with `code`, bound address 0.0.0.0:0 (the proxy does not say where it dialled from). */
export function socksReply(code: number): Uint8Array {
  return new Uint8Array([SOCKS_VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0]);
}

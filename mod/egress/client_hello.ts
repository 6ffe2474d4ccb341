/**
 * The first bytes a client sends into a tunnel, judged without I/O. A TLS ClientHello must name
 * (SNI) the very host the tunnel was opened to, which stops domain fronting: a tunnel to a listed
 * name on a CDN that carries TLS for another name. Bytes that are not TLS are, off port 443, left to
 * the proxy to read as one plain HTTP request held to the tunnel's host; on 443 they are refused.
 */
import { type CanonicalHost, canonicalHost } from "../config/mod.ts";
import { closeQuietly, Deadline } from "./byte_streams.ts";

/** The most bytes of handshake records read to find the ClientHello's end. */
export const MAX_HELLO_BYTES = 64 * 1024;

/** What the first bytes of a tunnel are. */
export type FirstBytes =
  | { need: number }
  | { tls: false }
  | { tls: true; names: string[] }
  | { malformed: string };

/**
 * The verdict on a tunnel's first bytes: wait for more, let it through, read it as a plain HTTP
 * request (it is not TLS), or refuse it.
 */
export type FirstBytesVerdict =
  | { need: number }
  | { ok: true }
  | { plain: true }
  | { reason: "sni_mismatch" | "no_sni" | "not_tls" };

/**
 * Judges the first bytes of a tunnel to `target` on `port`: a ClientHello must name `target` and
 * nothing else (a tunnel to an address must name nothing); anything else is refused on port 443
 * and, on other ports, is for the proxy to read as a plain HTTP request.
 */
export function judgeFirstBytes(
  bytes: Uint8Array,
  to: { host: CanonicalHost; port: number },
): FirstBytesVerdict {
  const { host: target, port } = to;
  const first = readFirstBytes(bytes);
  if ("need" in first) return first;
  if ("malformed" in first) return { reason: "not_tls" };
  if (!first.tls) return port === 443 ? { reason: "not_tls" } : { plain: true };
  if (first.names.length === 0) return target.kind === "ip" ? { ok: true } : { reason: "no_sni" };
  if (first.names.length > 1 || target.kind === "ip") return { reason: "sni_mismatch" };
  const named = canonicalHost(first.names[0]);
  if ("problem" in named || named.kind !== "name" || named.host !== target.host) {
    return { reason: "sni_mismatch" };
  }
  return { ok: true };
}

/** Reads the ClientHello at the start of `bytes`, across as many handshake records as it takes. */
export function readFirstBytes(bytes: Uint8Array): FirstBytes {
  if (bytes.length < 1) return { need: 1 };
  if (bytes[0] !== 0x16) return { tls: false };
  // Gather the handshake bytes of successive records until the first message is whole.
  const handshake: number[] = [];
  let offset = 0;
  for (;;) {
    if (bytes.length < offset + 5) return { need: offset + 5 };
    if (bytes[offset] !== 0x16 || bytes[offset + 1] !== 0x03) {
      return offset === 0 ? { tls: false } : { malformed: "a record that is not a handshake" };
    }
    const length = (bytes[offset + 3] << 8) | bytes[offset + 4];
    if (length === 0 || length > 16384 + 2048) return { malformed: "a record of a bad length" };
    const end = offset + 5 + length;
    if (end > MAX_HELLO_BYTES) return { malformed: "a ClientHello longer than 64 KiB" };
    if (bytes.length < end) return { need: end };
    for (let i = offset + 5; i < end; i++) handshake.push(bytes[i]);
    offset = end;
    if (handshake.length < 4) continue;
    if (handshake[0] !== 0x01) return { malformed: "a first handshake that is not a ClientHello" };
    const messageLength = (handshake[1] << 16) | (handshake[2] << 8) | handshake[3];
    if (handshake.length >= 4 + messageLength) {
      return helloNames(new Uint8Array(handshake.slice(4, 4 + messageLength)));
    }
  }
}

/** The SNI host names of a ClientHello's body. */
function helloNames(body: Uint8Array): FirstBytes {
  const bad = (what: string): FirstBytes => ({ malformed: `a ClientHello with ${what}` });
  let at = 2 + 32; // version, random
  if (body.length < at + 1) return bad("no session id");
  at += 1 + body[at];
  if (body.length < at + 2) return bad("no cipher suites");
  at += 2 + ((body[at] << 8) | body[at + 1]);
  if (body.length < at + 1) return bad("no compression methods");
  at += 1 + body[at];
  if (at === body.length) return { tls: true, names: [] };
  if (body.length < at + 2) return bad("a cut extensions length");
  const extensionsEnd = at + 2 + ((body[at] << 8) | body[at + 1]);
  if (extensionsEnd !== body.length) return bad("extensions that do not fill it");
  at += 2;
  const names: string[] = [];
  let seenSni = false;
  while (at < extensionsEnd) {
    if (at + 4 > extensionsEnd) return bad("a cut extension");
    const type = (body[at] << 8) | body[at + 1];
    const length = (body[at + 2] << 8) | body[at + 3];
    const start = at + 4;
    at = start + length;
    if (at > extensionsEnd) return bad("a cut extension");
    if (type !== 0) continue;
    if (seenSni) return bad("two server_name extensions");
    seenSni = true;
    if (length < 2) return bad("a cut server_name");
    const listEnd = start + 2 + ((body[start] << 8) | body[start + 1]);
    if (listEnd !== at) return bad("a server_name list that does not fill it");
    let entry = start + 2;
    while (entry < listEnd) {
      if (entry + 3 > listEnd) return bad("a cut server name");
      const nameType = body[entry];
      const nameLength = (body[entry + 1] << 8) | body[entry + 2];
      const nameEnd = entry + 3 + nameLength;
      if (nameEnd > listEnd) return bad("a cut server name");
      const name = String.fromCharCode(...body.subarray(entry + 3, nameEnd));
      // Any name type counts: a second type would be a second name for the server to choose.
      names.push(nameType === 0 ? name : `\u0000${name}`);
      entry = nameEnd;
    }
  }
  return { tls: true, names };
}

/**
 * A taker that hands the tunnel on only once its first bytes are a ClientHello naming `target`
 * alone, sent within `timeoutMs`; plain bytes are not_tls whatever the port (the box answers such
 * a tunnel with TLS alone). A refusal is told to `refused` and the tunnel closed; a client that
 * ends or times out first is closed without one.
 */
export function helloFirst(
  target: CanonicalHost,
  taker: (client: Deno.Conn, first: Uint8Array) => Promise<void>,
  options: {
    timeoutMs: number;
    refused(reason: "sni_mismatch" | "no_sni" | "not_tls"): Promise<void>;
  },
): (client: Deno.Conn, first: Uint8Array) => Promise<void> {
  return async (client, first) => {
    let bytes = first;
    const deadline = new Deadline(client, options.timeoutMs);
    let verdict = judgeFirstBytes(bytes, { host: target, port: 443 });
    try {
      while ("need" in verdict) {
        const more = await readUpTo(client, Math.min(verdict.need, MAX_HELLO_BYTES) - bytes.length);
        if (more === null) return closeQuietly(client);
        const joined = new Uint8Array(bytes.length + more.length);
        joined.set(bytes);
        joined.set(more, bytes.length);
        bytes = joined;
        verdict = judgeFirstBytes(bytes, { host: target, port: 443 });
      }
    } finally {
      deadline.clear();
    }
    if (!("ok" in verdict)) {
      await options.refused("reason" in verdict ? verdict.reason : "not_tls").catch(() => {});
      return closeQuietly(client);
    }
    await taker(client, bytes);
  };
}

/** Reads once, at most `count` bytes (at least one); null when the connection ended or failed. */
async function readUpTo(conn: Deno.Conn, count: number): Promise<Uint8Array | null> {
  if (count <= 0) return null;
  const buffer = new Uint8Array(Math.min(count, 16 * 1024));
  try {
    const read = await conn.read(buffer);
    return read === null ? null : buffer.subarray(0, read);
  } catch {
    return null;
  }
}

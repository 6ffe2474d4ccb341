/**
 * The frames of `box-egress-v1` (docs/egress-tunnel.md): pure encoding and decoding, no I/O.
 * A binary WebSocket message is one frame: a type byte, a 32-bit big-endian stream id, and a
 * payload. The hello and welcome are the only text messages.
 */

/** The protocol's name, sent in the first message each way. */
export const PROTOCOL = "box-egress-v1";

/** The frame types. */
export const FrameType = {
  OPEN: 1,
  OPEN_OK: 2,
  DATA: 3,
  CREDIT: 4,
  CLOSE: 5,
  RESET: 6,
  PING: 7,
  PONG: 8,
} as const;

/** A frame type's number. */
export type FrameTypeNumber = typeof FrameType[keyof typeof FrameType];

/** Why a stream was reset: the first payload byte of RESET. */
export const ResetCode = {
  PROTOCOL: 1,
  REFUSED: 2,
  UNREACHABLE: 3,
  FLOW_CONTROL: 4,
  CANCELLED: 5,
  LIMIT: 6,
} as const;

/** The limits the guest announces in its welcome; the client keeps to them. */
export interface Limits {
  /** Bytes a side may send on one stream before the other grants more (the initial credit). */
  window: number;
  /** The largest DATA payload. */
  maxFrame: number;
  /** Streams open at once. */
  maxStreams: number;
  /** Seconds between pings; a side silent for three times this is gone. */
  pingSeconds: number;
}

/** The guest's defaults. */
export const DEFAULT_LIMITS: Limits = {
  window: 512 * 1024,
  maxFrame: 64 * 1024,
  maxStreams: 64,
  pingSeconds: 10,
};

/** One decoded frame. */
export interface Frame {
  type: FrameTypeNumber;
  stream: number;
  payload: Uint8Array;
}

const HEADER = 5;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/** Encodes one frame. */
export function encodeFrame(
  type: FrameTypeNumber,
  stream: number,
  payload?: Uint8Array,
): Uint8Array {
  const body = payload ?? new Uint8Array(0);
  const out = new Uint8Array(HEADER + body.length);
  out[0] = type;
  new DataView(out.buffer).setUint32(1, stream);
  out.set(body, HEADER);
  return out;
}

/** A CREDIT frame granting `bytes` more. */
export function creditFrame(stream: number, bytes: number): Uint8Array {
  const payload = new Uint8Array(4);
  new DataView(payload.buffer).setUint32(0, bytes);
  return encodeFrame(FrameType.CREDIT, stream, payload);
}

/** A RESET frame with its code and a reason a person can read. */
export function resetFrame(stream: number, code: number, reason: string): Uint8Array {
  const text = encoder.encode(reason.slice(0, 200));
  const payload = new Uint8Array(1 + text.length);
  payload[0] = code;
  payload.set(text, 1);
  return encodeFrame(FrameType.RESET, stream, payload);
}

/** An OPEN frame asking the client for host:port. */
export function openFrame(stream: number, host: string, port: number): Uint8Array {
  return encodeFrame(FrameType.OPEN, stream, encoder.encode(`${host}:${port}`));
}

/** Why a message is not a frame; the connection closes with it. */
export class FrameError extends Error {}

/** Decodes one binary message; throws FrameError naming what is wrong. */
export function decodeFrame(bytes: Uint8Array, maxFrame: number): Frame {
  if (bytes.length < HEADER) throw new FrameError(`a frame of ${bytes.length} bytes is too short`);
  const type = bytes[0];
  if (type < FrameType.OPEN || type > FrameType.PONG) {
    throw new FrameError(`frame type ${type} is not one of box-egress-v1's`);
  }
  const stream = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1);
  const payload = bytes.subarray(HEADER);
  const control = type === FrameType.PING || type === FrameType.PONG;
  if (control !== (stream === 0)) {
    throw new FrameError(
      control ? "PING and PONG belong to stream 0" : `frame type ${type} needs a stream id`,
    );
  }
  if (payload.length > maxFrame + 256) {
    throw new FrameError(`a payload of ${payload.length} bytes is over ${maxFrame}`);
  }
  if (type === FrameType.DATA && payload.length > maxFrame) {
    throw new FrameError(`a DATA payload of ${payload.length} bytes is over ${maxFrame}`);
  }
  if (type === FrameType.CREDIT && payload.length !== 4) {
    throw new FrameError("a CREDIT payload is 4 bytes");
  }
  return { type: type as FrameTypeNumber, stream, payload };
}

/** The increment a CREDIT frame grants. */
export function creditOf(frame: Frame): number {
  return new DataView(frame.payload.buffer, frame.payload.byteOffset, 4).getUint32(0);
}

/** A RESET frame's code and reason. */
export function resetOf(frame: Frame): { code: number; reason: string } {
  if (frame.payload.length === 0) return { code: ResetCode.PROTOCOL, reason: "" };
  let reason = "";
  try {
    reason = decoder.decode(frame.payload.subarray(1));
  } catch {
    reason = "(not UTF-8)";
  }
  return { code: frame.payload[0], reason };
}

/** An OPEN frame's target, or null when it is not host:port with a port from 1 to 65535. */
export function targetOf(frame: Frame): { host: string; port: number } | null {
  let text: string;
  try {
    text = decoder.decode(frame.payload);
  } catch {
    return null;
  }
  return parseTarget(text);
}

/** Parses `host:port` or `[v6]:port`; null when it is not one. */
export function parseTarget(text: string): { host: string; port: number } | null {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]{1,253})):(\d{1,5})$/.exec(text);
  if (match === null) return null;
  const port = Number(match[3]);
  if (port < 1 || port > 65535) return null;
  return { host: (match[1] ?? match[2]).toLowerCase(), port };
}

/** The client's first message. */
export interface Hello {
  type: "hello";
  protocol: string;
  client?: string;
}

/** The guest's answer to a hello it accepts. */
export interface Welcome {
  type: "welcome";
  protocol: typeof PROTOCOL;
  limits: Limits;
  /** true when this client took the place of an earlier one with the same token. */
  replaced: boolean;
}

/** Parses the hello; returns a reason when it is not one this guest speaks. */
export function checkHello(
  text: string,
): { ok: true; hello: Hello } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: "the first message is not JSON" };
  }
  const hello = value as Partial<Hello>;
  if (typeof value !== "object" || value === null || hello.type !== "hello") {
    return { ok: false, reason: 'the first message is not {"type":"hello",…}' };
  }
  if (hello.protocol !== PROTOCOL) {
    return {
      ok: false,
      reason: `protocol ${
        JSON.stringify(hello.protocol)
      } is not spoken here; this guest speaks ${PROTOCOL}`,
    };
  }
  return { ok: true, hello: hello as Hello };
}

/**
 * One side of a `box-egress-v1` connection (docs/egress-tunnel.md): streams over one WebSocket,
 * each tied to a TCP connection, with per-stream credit so one slow stream holds at most its
 * window of bytes and never stalls the others, and pings to notice a silent peer.
 */
import {
  creditFrame,
  creditOf,
  decodeFrame,
  encodeFrame,
  type Frame,
  FrameError,
  FrameType,
  type Limits,
  ResetCode,
  resetFrame,
  resetOf,
} from "./frames.ts";

/** What a side does with a WebSocket. */
export interface FrameSocket {
  send(data: Uint8Array | string): void;
  close(code?: number, reason?: string): void;
  readonly bufferedAmount: number;
}

/** How a stream ended, for the line a side prints. */
export interface StreamEnd {
  id: number;
  sent: number;
  received: number;
  reset?: { code: number; reason: string };
}

interface Stream {
  id: number;
  conn: Deno.Conn | null;
  sendCredit: number;
  creditWaiter: (() => void) | null;
  /** Bytes received and not yet written to conn; at most the window. */
  queue: Uint8Array[];
  queued: number;
  writerWake: (() => void) | null;
  ungranted: number;
  remoteClosed: boolean;
  localClosed: boolean;
  done: boolean;
  sent: number;
  received: number;
}

/** The hooks a side gives its mux. */
export interface MuxHooks {
  /** An OPEN arrived (the client side): connect and call accept, or reset. */
  onOpen?: (id: number, frame: Frame) => void;
  /** An OPEN_OK or a RESET answered an open this side asked for. */
  onOpenAnswer?: (
    id: number,
    answer: { ok: true } | { ok: false; code: number; reason: string },
  ) => void;
  onStreamEnd?: (end: StreamEnd) => void;
  /** The connection ended, with a reason. */
  onClose?: (reason: string) => void;
}

/** A side's streams over one WebSocket. */
export class Mux {
  #streams = new Map<number, Stream>();
  #highest = 0;
  #lastSeen = Date.now();
  #pinger: ReturnType<typeof setInterval> | undefined;
  #closed = false;
  /** Bytes read from TCP and sent, or received and queued, not yet acknowledged: for tests. */
  readonly stats = { framesIn: 0, bytesReadFromConns: 0, queuedBytes: 0 };

  constructor(
    private readonly socket: FrameSocket,
    readonly limits: Limits,
    private readonly hooks: MuxHooks,
    private readonly opensStreams: boolean,
  ) {
    this.#pinger = setInterval(() => this.#tick(), limits.pingSeconds * 1000);
  }

  /** Streams open now. */
  get size(): number {
    return this.#streams.size;
  }

  /** Whether the connection has ended. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Allocates a stream id and sends OPEN (the guest side). */
  open(frameOf: (id: number) => Uint8Array): number {
    const id = ++this.#highest;
    this.#streams.set(id, this.#newStream(id));
    this.#send(frameOf(id));
    return id;
  }

  /** Ties an opened stream to its TCP connection and starts both pumps. */
  attach(id: number, conn: Deno.Conn, head?: Uint8Array): void {
    const stream = this.#streams.get(id);
    if (!stream || stream.done) {
      conn.close();
      return;
    }
    stream.conn = conn;
    // What the proxy read past the request head goes out first (at most 16 KiB, within credit).
    for (let at = 0; head && at < head.length; at += this.limits.maxFrame) {
      const chunk = head.subarray(at, at + this.limits.maxFrame);
      stream.sendCredit -= chunk.length;
      stream.sent += chunk.length;
      this.#send(encodeFrame(FrameType.DATA, stream.id, chunk));
    }
    this.#readLoop(stream);
    this.#writeLoop(stream);
  }

  /** Accepts an OPEN (the client side): answers OPEN_OK and ties the connection. */
  accept(id: number, conn: Deno.Conn): void {
    this.#send(encodeFrame(FrameType.OPEN_OK, id));
    this.attach(id, conn);
  }

  /** Resets one stream, telling the peer why. */
  reset(id: number, code: number, reason: string): void {
    const stream = this.#streams.get(id);
    this.#send(resetFrame(id, code, reason));
    if (stream) this.#finish(stream, { code, reason });
  }

  /** Handles one message from the peer; a bad frame closes the connection with its reason. */
  receive(data: Uint8Array): void {
    if (this.#closed) return;
    this.#lastSeen = Date.now();
    this.stats.framesIn++;
    let frame: Frame;
    try {
      frame = decodeFrame(data, this.limits.maxFrame);
      this.#handle(frame);
    } catch (error) {
      if (!(error instanceof FrameError)) throw error;
      this.close(1002, `bad frame: ${error.message}`);
    }
  }

  /** Ends every stream and the WebSocket. */
  close(code = 1000, reason = "closed"): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#pinger);
    for (const stream of [...this.#streams.values()]) {
      this.#finish(stream, { code: ResetCode.CANCELLED, reason: `the tunnel closed: ${reason}` });
    }
    try {
      this.socket.close(code, reason.slice(0, 120));
    } catch {
      // Already closed.
    }
    this.hooks.onClose?.(reason);
  }

  #newStream(id: number): Stream {
    return {
      id,
      conn: null,
      sendCredit: this.limits.window,
      creditWaiter: null,
      queue: [],
      queued: 0,
      writerWake: null,
      ungranted: 0,
      remoteClosed: false,
      localClosed: false,
      done: false,
      sent: 0,
      received: 0,
    };
  }

  #handle(frame: Frame): void {
    if (frame.type === FrameType.PING) {
      this.#send(encodeFrame(FrameType.PONG, 0, frame.payload.slice(0, 8)));
      return;
    }
    if (frame.type === FrameType.PONG) return;
    if (frame.type === FrameType.OPEN) {
      if (this.opensStreams) throw new FrameError("the client may not send OPEN");
      if (frame.stream <= this.#highest) throw new FrameError("OPEN reuses a stream id");
      this.#highest = frame.stream;
      if (this.#streams.size >= this.limits.maxStreams) {
        this.#send(resetFrame(frame.stream, ResetCode.LIMIT, "too many streams"));
        return;
      }
      this.#streams.set(frame.stream, this.#newStream(frame.stream));
      this.hooks.onOpen?.(frame.stream, frame);
      return;
    }
    if (frame.stream > this.#highest) {
      throw new FrameError(`stream ${frame.stream} was never opened`);
    }
    const stream = this.#streams.get(frame.stream);
    // A frame for a stream that has ended crossed our RESET or CLOSE: it is dropped.
    if (!stream) return;
    switch (frame.type) {
      case FrameType.OPEN_OK:
        if (!this.opensStreams) throw new FrameError("the guest may not send OPEN_OK");
        this.hooks.onOpenAnswer?.(stream.id, { ok: true });
        return;
      case FrameType.DATA:
        if (stream.remoteClosed) throw new FrameError(`DATA after CLOSE on stream ${stream.id}`);
        if (stream.queued + frame.payload.length > this.limits.window) {
          throw new FrameError(`stream ${stream.id} sent past its credit`);
        }
        stream.received += frame.payload.length;
        this.#enqueue(stream, frame.payload);
        return;
      case FrameType.CREDIT: {
        const more = creditOf(frame);
        if (stream.sendCredit + more > this.limits.window) {
          throw new FrameError(`stream ${stream.id} was granted more than the window`);
        }
        stream.sendCredit += more;
        stream.creditWaiter?.();
        return;
      }
      case FrameType.CLOSE:
        stream.remoteClosed = true;
        stream.writerWake?.();
        return;
      case FrameType.RESET: {
        const reset = resetOf(frame);
        if (stream.conn === null) this.hooks.onOpenAnswer?.(stream.id, { ok: false, ...reset });
        this.#finish(stream, reset);
        return;
      }
    }
  }

  #enqueue(stream: Stream, bytes: Uint8Array): void {
    stream.queue.push(bytes);
    stream.queued += bytes.length;
    this.stats.queuedBytes += bytes.length;
    stream.writerWake?.();
  }

  async #readLoop(stream: Stream): Promise<void> {
    // Read straight after a frame header's room, so a DATA frame is built without a copy.
    const framed = new Uint8Array(5 + this.limits.maxFrame);
    framed[0] = FrameType.DATA;
    new DataView(framed.buffer).setUint32(1, stream.id);
    const buffer = framed.subarray(5);
    try {
      while (!stream.done) {
        while (stream.sendCredit === 0 && !stream.done) {
          await new Promise<void>((resolve) => stream.creditWaiter = resolve);
          stream.creditWaiter = null;
        }
        if (stream.done) return;
        const want = Math.min(buffer.length, stream.sendCredit);
        const count = await stream.conn!.read(buffer.subarray(0, want));
        if (stream.done) return;
        if (count === null) {
          stream.localClosed = true;
          this.#send(encodeFrame(FrameType.CLOSE, stream.id));
          this.#maybeDone(stream);
          return;
        }
        stream.sendCredit -= count;
        stream.sent += count;
        this.stats.bytesReadFromConns += count;
        this.#send(framed.subarray(0, 5 + count));
      }
    } catch {
      if (!stream.done) this.reset(stream.id, ResetCode.CANCELLED, "the connection failed");
    }
  }

  async #writeLoop(stream: Stream): Promise<void> {
    try {
      while (!stream.done) {
        if (stream.queue.length === 0) {
          if (stream.remoteClosed) {
            await stream.conn!.closeWrite().catch(() => {});
            this.#maybeDone(stream);
            return;
          }
          await new Promise<void>((resolve) => stream.writerWake = resolve);
          stream.writerWake = null;
          continue;
        }
        const chunk = stream.queue.shift()!;
        let written = 0;
        while (written < chunk.length) written += await stream.conn!.write(chunk.subarray(written));
        stream.queued -= chunk.length;
        this.stats.queuedBytes -= chunk.length;
        stream.ungranted += chunk.length;
        if (stream.ungranted >= this.limits.window / 4 || stream.queue.length === 0) {
          if (!stream.remoteClosed) this.#send(creditFrame(stream.id, stream.ungranted));
          stream.ungranted = 0;
        }
      }
    } catch {
      if (!stream.done) this.reset(stream.id, ResetCode.CANCELLED, "the connection failed");
    }
  }

  #maybeDone(stream: Stream): void {
    if (stream.localClosed && stream.remoteClosed && stream.queue.length === 0) {
      this.#finish(stream, undefined);
    }
  }

  #finish(stream: Stream, reset: { code: number; reason: string } | undefined): void {
    if (stream.done) return;
    stream.done = true;
    this.#streams.delete(stream.id);
    this.stats.queuedBytes -= stream.queued;
    stream.queue = [];
    stream.queued = 0;
    try {
      stream.conn?.close();
    } catch {
      // Closed already.
    }
    stream.creditWaiter?.();
    stream.writerWake?.();
    this.hooks.onStreamEnd?.({
      id: stream.id,
      sent: stream.sent,
      received: stream.received,
      reset,
    });
  }

  #send(bytes: Uint8Array | string): void {
    if (this.#closed) return;
    // Credit bounds what streams send; this bounds what a peer that reads nothing can make us hold.
    const bound = this.limits.maxStreams * (this.limits.window + this.limits.maxFrame) + (1 << 20);
    if (this.socket.bufferedAmount > bound) {
      this.close(1008, "the peer stopped reading");
      return;
    }
    try {
      this.socket.send(bytes);
    } catch {
      this.close(1011, "the WebSocket failed");
    }
  }

  #tick(): void {
    if (Date.now() - this.#lastSeen > this.limits.pingSeconds * 3000) {
      this.close(1001, "the peer answered no ping");
      return;
    }
    this.#send(encodeFrame(FrameType.PING, 0, new Uint8Array(8)));
  }
}

/**
 * MCP's stdio transport over an app's process, for the SDK's Client: one JSON-RPC message per line
 * on the process's stdout, one per line written to its stdin. Written here rather than taken from
 * the SDK's StdioClientTransport, which spawns the server itself: an app's server is started in its
 * sandbox by the core (AppLauncher), and this reads what that process says with a bound on each
 * line. A line longer than the bound, or one that is not a JSON-RPC message, ends the connection
 * with an error that says so: a server that writes anything else on stdout is broken, and is
 * treated as a crash rather than guessed at.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** A running app server, as the launcher hands it over. */
export interface AppProcess {
  readonly stdin: WritableStream<Uint8Array>;
  readonly stdout: ReadableStream<Uint8Array>;
  readonly stderr: ReadableStream<Uint8Array>;
  /** Settles when the process (its whole sandbox) has ended. */
  readonly status: Promise<{ code: number; signal: string | null }>;
  /** Ends the process and everything it started; resolves once it is gone. */
  kill(): Promise<void>;
}

/** The longest line a server may write: a message with images or a large result fits. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

/** The SDK's Transport over an AppProcess. */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #process: AppProcess;
  readonly #maxLine: number;
  #writer: WritableStreamDefaultWriter<Uint8Array> | null = null;
  #closed = false;
  #failure: string | null = null;
  readonly #encoder = new TextEncoder();

  constructor(process: AppProcess, options: { maxLineBytes?: number } = {}) {
    this.#process = process;
    this.#maxLine = options.maxLineBytes ?? MAX_LINE_BYTES;
  }

  /** Why the transport ended the connection (a line too long, one not MCP), if it did. */
  get failure(): string | null {
    return this.#failure;
  }

  start(): Promise<void> {
    this.#writer = this.#process.stdin.getWriter();
    this.#read().catch((error) => this.#fail(error));
    this.#process.status.then(() => this.#end(), () => this.#end());
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed || this.#writer === null) throw new Error("the app's server has ended");
    await this.#writer.write(this.#encoder.encode(JSON.stringify(message) + "\n"));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#writer?.close().catch(() => {});
    await this.#process.kill();
    this.#end();
  }

  async #read(): Promise<void> {
    const reader = this.#process.stdout.getReader();
    const decoder = new TextDecoder("utf-8", { fatal: true });
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        let start = 0;
        for (let at = value.indexOf(10); at !== -1; at = value.indexOf(10, start)) {
          const piece = value.subarray(start, at);
          const line = pending.length === 0
            ? piece
            : join([...pending, piece], pendingBytes + piece.length);
          pending = [];
          pendingBytes = 0;
          start = at + 1;
          if (line.length > this.#maxLine) throw new Error(tooLong(this.#maxLine));
          this.#message(decoder.decode(line));
          if (this.#closed) return;
        }
        if (start < value.length) {
          pendingBytes += value.length - start;
          if (pendingBytes > this.#maxLine) throw new Error(tooLong(this.#maxLine));
          pending.push(value.slice(start));
        }
      }
    } finally {
      reader.releaseLock();
    }
  }

  #message(text: string): void {
    const trimmed = text.endsWith("\r") ? text.slice(0, -1) : text;
    if (trimmed.trim() === "") return;
    let parsed: JSONRPCMessage;
    try {
      parsed = JSONRPCMessageSchema.parse(JSON.parse(trimmed));
    } catch {
      throw new Error("the app's server wrote a line on stdout that is not an MCP message");
    }
    this.onmessage?.(parsed);
  }

  #fail(error: unknown): void {
    if (this.#closed) return;
    this.#failure = error instanceof Error ? error.message : String(error);
    this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    this.close().catch(() => {});
  }

  #end(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }
}

function tooLong(max: number): string {
  return `the app's server wrote a line on stdout longer than ${max} bytes`;
}

function join(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

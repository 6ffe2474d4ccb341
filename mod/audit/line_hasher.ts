/**
 * The hashes of a log's lines for verifyHome, a chunk of whole lines at a time: computed in this
 * thread, or by a hasher Worker with no permission at the other end of a MessagePort, so that a
 * second core hashes while this thread parses. A line's hash is a third of the verifier's work
 * and node:crypto's cost per call, not per byte, is most of it (about 1.1 µs a line here). The
 * hasher also finds where each line ends, so the thread that parses does not search for newlines,
 * and the Worker reads the file where the role read it, in a SharedArrayBuffer, so no one copies
 * it. This file imports nothing at run time.
 */

/** About how many bytes a chunk holds; a chunk always ends at a line's end. */
const CHUNK_BYTES = 1 << 20;

/** One chunk of whole lines of a file, with its lines' hashes and where each line ends. */
export interface HashedChunk {
  bytes: Uint8Array;
  /** The SHA-256 of each line, as 64 lowercase hex digits a line, one after the other. */
  hex: string;
  /** Where each line ends in the chunk: the offset of its newline, or the chunk's length. */
  ends: Uint32Array<ArrayBuffer>;
}

/** A file's chunks, in order; null after the last. */
export interface ChunkStream {
  next(): Promise<HashedChunk | null>;
}

/** Options of hashFile. */
export interface HashFileOptions {
  /** About how many bytes a chunk holds (the tests make it small); 1 MiB by default. */
  chunkBytes?: number;
}

/** Hashes the lines of files, a chunk at a time. */
export interface LineHasher {
  /**
   * Hands a file's content to the hasher at once and returns its chunks as they are hashed. The
   * lines are split as ChainVerifier.feed splits them. The content must not change afterwards.
   */
  hashFile(content: Uint8Array, options?: HashFileOptions): ChunkStream;
}

/** The chunks of a file with their lines' hashes, by the given SHA-256 (hex) of one line. */
export function* hashChunks(
  content: Uint8Array,
  sha256Hex: (bytes: Uint8Array) => string,
  options: HashFileOptions = {},
): Generator<HashedChunk> {
  const chunkBytes = Math.max(1, options.chunkBytes ?? CHUNK_BYTES);
  let start = 0;
  while (start < content.length) {
    const newline = content.indexOf(10, Math.min(start + chunkBytes, content.length) - 1);
    const end = newline === -1 ? content.length : newline + 1;
    const bytes = content.subarray(start, end);
    const hashes: string[] = [];
    const ends: number[] = [];
    let lineStart = 0;
    while (lineStart < bytes.length) {
      const found = bytes.indexOf(10, lineStart);
      const lineEnd = found === -1 ? bytes.length : found;
      hashes.push(sha256Hex(bytes.subarray(lineStart, lineEnd)));
      ends.push(lineEnd);
      lineStart = lineEnd + 1;
    }
    yield { bytes, hex: hashes.join(""), ends: Uint32Array.from(ends) };
    start = end;
  }
}

/** A hasher in this thread; node:crypto is loaded only now, as only this one uses it. */
export async function localHasher(): Promise<LineHasher> {
  const { sha256Hex } = await import("./hash.ts");
  return {
    hashFile(content: Uint8Array, options: HashFileOptions = {}): ChunkStream {
      const chunks = hashChunks(content, sha256Hex, options);
      return { next: () => Promise.resolve(chunks.next().value ?? null) };
    },
  };
}

/** What the verifier sends the hasher Worker: one file's content, in shared memory. */
export interface HashRequest {
  content: Uint8Array<SharedArrayBuffer>;
  chunkBytes: number;
}

/** A chunk as the Worker answers it: where it is in the content, its hashes and line ends. */
export interface ChunkAnswer {
  start: number;
  end: number;
  hex: string;
  ends: Uint32Array<ArrayBuffer>;
}

/** The hasher Worker's answers to a request, in order: its chunks, then the end or an error. */
export type HashAnswer =
  | { kind: "chunk"; chunk: ChunkAnswer }
  | { kind: "end" }
  | { kind: "error"; error: string };

/** The answers of one file, queued until they are read. */
class AnswerQueue implements ChunkStream {
  #content: Uint8Array;
  #answers: HashAnswer[] = [];
  #waiting: ((answer: HashAnswer) => void) | null = null;

  constructor(content: Uint8Array) {
    this.#content = content;
  }

  push(answer: HashAnswer): void {
    const waiting = this.#waiting;
    this.#waiting = null;
    if (waiting === null) this.#answers.push(answer);
    else waiting(answer);
  }

  async next(): Promise<HashedChunk | null> {
    const answer = this.#answers.shift() ??
      await new Promise<HashAnswer>((resolve) => (this.#waiting = resolve));
    if (answer.kind === "chunk") {
      const { start, end, hex, ends } = answer.chunk;
      return { bytes: this.#content.subarray(start, end), hex, ends };
    }
    // After the end (or an error) the queue answers the same again.
    this.#answers.unshift(answer);
    if (answer.kind === "end") return null;
    throw new Error(`the audit hasher failed: ${answer.error}`);
  }
}

/**
 * A hasher that sends each file to the hasher Worker behind the port (startHasher). The Worker
 * answers files in the order they were sent, so its answers go to the oldest file not ended.
 */
export function portHasher(port: MessagePort): LineHasher {
  const files: AnswerQueue[] = [];
  port.onmessage = (event: MessageEvent<HashAnswer>) => {
    const file = files[0];
    if (file === undefined) return;
    file.push(event.data);
    if (event.data.kind !== "chunk") files.shift();
  };
  return {
    hashFile(content: Uint8Array, options: HashFileOptions = {}): ChunkStream {
      const shared = sharedCopy(content);
      const file = new AnswerQueue(shared);
      files.push(file);
      const request: HashRequest = {
        content: shared,
        chunkBytes: options.chunkBytes ?? CHUNK_BYTES,
      };
      port.postMessage(request);
      return file;
    },
  };
}

/** The content itself if it is in shared memory (readShared), else a copy in shared memory. */
function sharedCopy(content: Uint8Array): Uint8Array<SharedArrayBuffer> {
  if (content.buffer instanceof SharedArrayBuffer) {
    return content as Uint8Array<SharedArrayBuffer>;
  }
  const shared = new Uint8Array(new SharedArrayBuffer(content.length));
  shared.set(content);
  return shared;
}

/**
 * Starts a hasher Worker that holds no permission at all, from the main thread (a Worker started
 * inside a role's Worker takes about 500 ms to pass its first message in Deno 2.9.6). The port is
 * for the role that verifies (VerifyHomeOptions.hasher); the caller terminates the Worker.
 */
export function startHasher(): { worker: Worker; port: MessagePort } {
  const worker = new Worker(new URL("./hasher_worker.ts", import.meta.url), {
    type: "module",
    name: "gurt-audit-hasher",
    deno: { permissions: "none" },
  });
  const channel = new MessageChannel();
  worker.postMessage({ port: channel.port1 }, [channel.port1]);
  return { worker, port: channel.port2 };
}

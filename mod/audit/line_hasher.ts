/**
 * The hashes of a log's lines for verifyHome, a chunk of whole lines at a time: computed in this
 * thread, or by a hasher Worker at the other end of a MessagePort, so that a second core hashes
 * while this thread reads and judges the lines. The hasher also finds where each line ends, so the
 * thread that reads does not search for newlines, and the Worker reads the file where the role
 * read it, in a SharedArrayBuffer, so no one copies it. Its hashes are 32 bytes a line, never hex:
 * the verifier compares a prev with them where it is, and makes hex only of the few it reports.
 * The Worker hashes with the system's libcrypto through FFI (line_digest.ts), the one permission
 * it holds, and with node:crypto where there is no libcrypto. This file imports nothing at run
 * time.
 */
import { libcryptoPath, lineSha256, type Sha256Into } from "./line_digest.ts";

/** About how many bytes a chunk holds; a chunk always ends at a line's end. */
const CHUNK_BYTES = 1 << 20;

/** One chunk of whole lines of a file, with its lines' hashes and where each line ends. */
export interface HashedChunk {
  bytes: Uint8Array;
  /** The SHA-256 of each line, 32 bytes a line, one after the other. */
  digests: Uint8Array<ArrayBuffer>;
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

/** The chunks of a file with their lines' hashes, by the given SHA-256 of one line. */
export function* hashChunks(
  content: Uint8Array,
  options: HashFileOptions & { sha256Into: Sha256Into },
): Generator<HashedChunk> {
  const { sha256Into } = options;
  const chunkBytes = Math.max(1, options.chunkBytes ?? CHUNK_BYTES);
  let start = 0;
  while (start < content.length) {
    const newline = content.indexOf(10, Math.min(start + chunkBytes, content.length) - 1);
    const end = newline === -1 ? content.length : newline + 1;
    const bytes = content.subarray(start, end);
    const lineEnds: number[] = [];
    for (let lineStart = 0; lineStart < bytes.length;) {
      const found = bytes.indexOf(10, lineStart);
      const lineEnd = found === -1 ? bytes.length : found;
      lineEnds.push(lineEnd);
      lineStart = lineEnd + 1;
    }
    const ends = Uint32Array.from(lineEnds);
    const digests = new Uint8Array(ends.length * 32);
    let lineStart = 0;
    for (let i = 0; i < ends.length; i++) {
      sha256Into(bytes.subarray(lineStart, ends[i]), digests, i * 32);
      lineStart = ends[i] + 1;
    }
    yield { bytes, digests, ends };
    start = end;
  }
}

/**
 * A hasher in this thread: with libcrypto where this thread may open it through FFI, else with
 * node:crypto, loaded only now.
 */
export async function localHasher(): Promise<LineHasher> {
  const sha256Into = await lineSha256(libcryptoPath());
  return {
    hashFile(content: Uint8Array, options: HashFileOptions = {}): ChunkStream {
      const chunks = hashChunks(content, { ...options, sha256Into });
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
  digests: Uint8Array<ArrayBuffer>;
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
      const { start, end, digests, ends } = answer.chunk;
      return { bytes: this.#content.subarray(start, end), digests, ends };
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

/** Options of startHasher. */
export interface StartHasherOptions {
  /**
   * The libcrypto the Worker may open, by its real path, or null for none (it then hashes with
   * node:crypto); the system's (libcryptoPath) by default.
   */
  library?: string | null;
}

/**
 * The hasher Worker's permissions: FFI for the one libcrypto file it hashes with, by its real path,
 * and nothing else; with no library, nothing at all.
 */
export function hasherPermissions(library: string | null): Deno.PermissionOptions {
  if (library === null) return "none";
  return {
    ffi: [library],
    read: false,
    write: false,
    net: false,
    env: false,
    sys: false,
    run: false,
    import: false,
  };
}

/** What the hasher Worker is first sent: its port, and the libcrypto it may open. */
export interface HasherStart {
  port: MessagePort;
  library: string | null;
}

/**
 * Starts a hasher Worker from the main thread (a Worker started inside a role's Worker takes about
 * 500 ms to pass its first message in Deno 2.9.6). It holds one permission: FFI for the one
 * libcrypto file it hashes with, by its real path; without one, none at all. The port is for the
 * role that verifies (VerifyHomeOptions.hasher); the caller terminates the Worker.
 */
export function startHasher(
  options: StartHasherOptions = {},
): { worker: Worker; port: MessagePort } {
  const library = options.library === undefined ? libcryptoPath() : options.library;
  const worker = new Worker(new URL("./hasher_worker.ts", import.meta.url), {
    type: "module",
    name: "gurt-audit-hasher",
    deno: { permissions: hasherPermissions(library) },
  });
  const channel = new MessageChannel();
  const start: HasherStart = { port: channel.port1, library };
  worker.postMessage(start, [channel.port1]);
  return { worker, port: channel.port2 };
}

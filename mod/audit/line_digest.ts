/**
 * The SHA-256 of one line at a time, for the verifier's hasher. node:crypto costs about 1.8 µs a
 * call here, nearly all of it per call, not per byte; the system's libcrypto (OpenSSL 3, with the
 * CPU's SHA instructions) called through FFI costs about 0.5 µs for a 300-byte line. So the hasher
 * uses libcrypto when it may open it (the hasher Worker is allowed FFI for that one file and
 * nothing else) and node:crypto when it cannot; both give the same digests
 * (tests/audit/line_digest_test.ts). This file imports nothing at run time.
 */

/** Writes the SHA-256 of `bytes` as 32 bytes into `out` at `at`. */
export type Sha256Into = (bytes: Uint8Array, out: Uint8Array, at: number) => void;

/** Where Debian's libssl3 (and other systems) put OpenSSL 3's libcrypto. */
const LIBCRYPTO_PATHS = [
  "/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
  "/usr/lib/aarch64-linux-gnu/libcrypto.so.3",
  "/usr/lib64/libcrypto.so.3",
  "/usr/lib/libcrypto.so.3",
  "/lib64/libcrypto.so.3",
];

/**
 * The real path of the system's libcrypto.so.3, or null if there is none or this thread may not
 * read where it would be: the one file the hasher Worker may open with FFI.
 */
export function libcryptoPath(): string | null {
  for (const path of LIBCRYPTO_PATHS) {
    // A role that may not read the path is not asked (no prompt): it has no libcrypto.
    if (Deno.permissions.querySync({ name: "read", path }).state !== "granted") continue;
    try {
      return Deno.realPathSync(path);
    } catch {
      // Not here; the next.
    }
  }
  return null;
}

/** The SHA-256 of "abc": libcrypto's answer is checked against it before it is used. */
const ABC_SHA256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/**
 * SHA-256 by libcrypto at `path` through FFI, or null if it cannot be opened here (no such file,
 * no FFI permission for it, not OpenSSL) or gives a wrong digest for a known input.
 */
export function libcryptoSha256(path: string): Sha256Into | null {
  try {
    if (Deno.permissions.querySync({ name: "ffi", path }).state !== "granted") return null;
    const lib = Deno.dlopen(path, {
      SHA256_Init: { parameters: ["buffer"], result: "i32" },
      SHA256_Update: { parameters: ["buffer", "buffer", "usize"], result: "i32" },
      SHA256_Final: { parameters: ["buffer", "buffer"], result: "i32" },
    });
    const { SHA256_Init, SHA256_Update, SHA256_Final } = lib.symbols;
    // SHA256_CTX is 112 bytes in OpenSSL 3; this leaves room to spare. It holds no pointer, so a
    // copy of a context just initialised is one: that costs less than a third call a line.
    const initial = new Uint8Array(256);
    if (SHA256_Init(initial) !== 1) return null;
    const context = new Uint8Array(256);
    const digest = new Uint8Array(32);
    const sha256Into: Sha256Into = (bytes, out, at) => {
      // Deno takes a number for a usize argument (its types say bigint, which would cost an
      // allocation a line); a line's length is far below 2^53.
      const length = bytes.length as unknown as bigint;
      context.set(initial);
      if (SHA256_Update(context, bytes, length) !== 1 || SHA256_Final(digest, context) !== 1) {
        throw new Error(`libcrypto at ${path} failed to hash a line`);
      }
      out.set(digest, at);
    };
    const check = new Uint8Array(32);
    sha256Into(new TextEncoder().encode("abc"), check, 0);
    if (toHex(check) !== ABC_SHA256) {
      lib.close();
      return null;
    }
    return sha256Into;
  } catch {
    return null;
  }
}

/** SHA-256 by node:crypto, loaded only now. */
export async function nodeSha256(): Promise<Sha256Into> {
  const { createHash } = await import("node:crypto");
  return (bytes, out, at) => out.set(createHash("sha256").update(bytes).digest(), at);
}

/** libcrypto's SHA-256 if the library is given and opens here, else node:crypto's. */
export async function lineSha256(library: string | null): Promise<Sha256Into> {
  return (library === null ? null : libcryptoSha256(library)) ?? await nodeSha256();
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

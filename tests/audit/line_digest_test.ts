/**
 * The hasher's two SHA-256s, libcrypto through FFI and node:crypto, give the same digests for any
 * bytes; this machine has libcrypto (install.sh installs libssl3), so the fast path is the
 * one these tests and `gurt audit verify` take; and a missing library is refused, not trusted.
 */
import fc from "fast-check";
import {
  hashChunks,
  hasherPermissions,
  libcryptoPath,
  libcryptoSha256,
  nodeSha256,
  sha256Hex,
} from "../../mod/audit/mod.ts";
import { assert, assertEquals } from "../assert.ts";

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

Deno.test("libcrypto is found here, by its real path", () => {
  const path = libcryptoPath();
  assert(path !== null, "no libcrypto.so.3: install.sh installs libssl3");
  assertEquals(Deno.realPathSync(path), path);
  assert(libcryptoSha256(path) !== null, `libcrypto at ${path} does not open`);
});

Deno.test("property: libcrypto's and node:crypto's SHA-256 agree on any bytes, at any offset", async () => {
  const ffi = libcryptoSha256(libcryptoPath() as string);
  assert(ffi !== null);
  const node = await nodeSha256();
  fc.assert(
    fc.property(
      fc.uint8Array({ maxLength: 2000 }),
      fc.nat(64),
      fc.boolean(),
      (bytes, at, shared) => {
        // A line is hashed where it is: inside a larger buffer, shared or not.
        const buffer: Uint8Array = shared
          ? new Uint8Array(new SharedArrayBuffer(bytes.length + 7))
          : new Uint8Array(bytes.length + 7);
        buffer.set(bytes, 3);
        const line = buffer.subarray(3, 3 + bytes.length);
        const a = new Uint8Array(32 + at);
        const b = new Uint8Array(32 + at);
        ffi(line, a, at);
        node(line, b, at);
        assertEquals(hex(a.subarray(at)), hex(b.subarray(at)));
        assertEquals(hex(a.subarray(at)), sha256Hex(bytes));
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("a library that is not there, or not libcrypto, is refused", () => {
  assertEquals(libcryptoSha256("/nonexistent/libcrypto.so.3"), null);
  assertEquals(libcryptoSha256("/usr/lib/x86_64-linux-gnu/libc.so.6"), null);
});

Deno.test("property: chunks hashed by libcrypto and by node:crypto are the same", async () => {
  const ffi = libcryptoSha256(libcryptoPath() as string);
  assert(ffi !== null);
  const node = await nodeSha256();
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.constant(10), fc.integer({ min: 0, max: 255 })), { maxLength: 3000 }),
      fc.integer({ min: 1, max: 700 }),
      (bytes, chunkBytes) => {
        const content = Uint8Array.from(bytes);
        const a = [...hashChunks(content, { sha256Into: ffi, chunkBytes })];
        const b = [...hashChunks(content, { sha256Into: node, chunkBytes })];
        assertEquals(a, b);
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("the hasher Worker holds FFI for its libcrypto file alone, and no other permission", async () => {
  const library = libcryptoPath() as string;
  // Any other path: the permission is checked before the file is opened.
  const other = `${library}.other`;
  const worker = new Worker(new URL("./permission_probe_worker.ts", import.meta.url), {
    type: "module",
    deno: { permissions: hasherPermissions(library) },
  });
  try {
    const held = await new Promise<Record<string, unknown>>((resolve, reject) => {
      worker.onmessage = (event) => resolve(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(event.message));
      };
      worker.postMessage({ library, other });
    });
    // A Worker cannot ask: what it was not given is "prompt" there, and refused when used.
    const { ffiLibrary, refusesOther, refusesRead, refusesEnv, refusesWrite, ...others } = held;
    assertEquals(ffiLibrary, "granted");
    for (const [name, state] of Object.entries(others)) assert(state !== "granted", name);
    assertEquals([refusesOther, refusesRead, refusesEnv, refusesWrite], [true, true, true, true]);
  } finally {
    worker.terminate();
  }
  assertEquals(hasherPermissions(null), "none");
});

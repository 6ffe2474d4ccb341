/**
 * Where gurt's own code is: the checkout, or the folder the one-file `dist/gurt` unpacked itself
 * into. Every role reads its code from there, and the core runs `gurt` again from there.
 */

/** The folder that holds gurt's source (main.ts and mod/), without a trailing slash. */
export function codeDir(): string {
  return new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
}

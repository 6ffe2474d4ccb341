/**
 * Where gurt's own code is: the checkout, or the folder the one-file `dist/gurt` unpacked itself
 * into. Every role reads its code from there, and the core runs `gurt` again from there.
 */

/** The folder that holds gurt's source (main.ts and mod/), without a trailing slash. */
export function codeDir(): string {
  return new URL("../../", import.meta.url).pathname.replace(/\/$/, "");
}

/**
 * The V8 flags every gurt process runs with: V8's linear regular-expression engine, which an
 * installed app's schema patterns run in (`l`: mod/apps/app_tools.ts), so a pattern built to
 * backtrack badly cannot hold the core's one thread on a task's input; and any other expression
 * that backtracks past V8's limit goes on in that engine where it can. The same list
 * is in tools/dist/header.sh and tools/build_dist.sh, and in deno.json's gurt task.
 */
export const V8_FLAGS =
  "--v8-flags=--enable-experimental-regexp-engine,--enable-experimental-regexp-engine-on-excessive-backtracks";

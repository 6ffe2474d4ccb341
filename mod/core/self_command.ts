/**
 * How the core starts another gurt process (a worker, `gurt mcp` in a task's mcp.json, the portal):
 * the compiled binary, or Deno running main.ts where this process's code is, which is the folder the
 * self-extracting dist/gurt unpacked itself into, or a checkout in development. Never the file a
 * user ran, whose unpacked copy is the same program already checked.
 */
import { codeDir, V8_FLAGS } from "../config/mod.ts";

/** The program and leading arguments that run `gurt ARGS…` the same way this process runs. */
export function gurtInvocation(args: string[]): { program: string; args: string[] } {
  const exec = Deno.execPath();
  if (!/\/deno$/.test(exec)) return { program: exec, args }; // a compiled gurt
  const root = codeDir();
  return {
    program: exec,
    args: [
      "run",
      "--quiet",
      V8_FLAGS,
      "--unstable-worker-options",
      "--unstable-no-legacy-abort",
      "--allow-all",
      "--no-prompt",
      "--frozen",
      // Everything gurt runs is in its node_modules: never ask the npm registry (from inside a
      // task, that is a connection its egress proxy refuses).
      "--cached-only",
      "--config",
      `${root}/deno.json`,
      `${root}/main.ts`,
      ...args,
    ],
  };
}

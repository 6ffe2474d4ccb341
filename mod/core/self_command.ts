/** How the core starts another gurt process: the compiled binary, or Deno running main.ts. */
import { codeDir } from "../config/mod.ts";

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
      "--unstable-worker-options",
      "--unstable-no-legacy-abort",
      "--allow-all",
      "--no-prompt",
      "--frozen",
      "--config",
      `${root}/deno.json`,
      `${root}/main.ts`,
      ...args,
    ],
  };
}

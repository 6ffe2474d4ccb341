/** Runs the real `gurt` (main.ts) as a child process, the way an owner would. */
import { V8_FLAGS } from "../../mod/config/code_dir.ts";

/** What a finished gurt command printed and how it exited. */
export interface GurtRun {
  code: number;
  stdout: string;
  stderr: string;
}

const main = new URL("../../main.ts", import.meta.url).pathname;

/** Deno's arguments that run `gurt ARGS` from main.ts, as a test starts it. */
export function gurtArgs(args: string[]): string[] {
  return [
    "run",
    "--quiet",
    V8_FLAGS,
    "--unstable-worker-options",
    "--unstable-no-legacy-abort",
    "--allow-all",
    main,
    ...args,
  ];
}

/** `gurt guest`'s words after `guest`: `flags`, a workspace, and ports the kernel chooses. */
export function guestArgs(workspace: string, flags: string[] = []): string[] {
  return [...flags, "--workspace", workspace, "--exec-port", "0", "--host-port", "0"];
}

/** The command that runs `gurt ARGS` (for a test that starts a long-running `gurt serve`). */
export function gurtCommand(
  args: string[],
  options: {
    env?: Record<string, string>;
    stdin?: "null" | "piped";
    stdout?: "null" | "piped";
    cwd?: string;
  } = {},
): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: gurtArgs(args),
    cwd: options.cwd,
    env: { NO_COLOR: "1", ...options.env },
    stdin: options.stdin ?? "null",
    stdout: options.stdout ?? "piped",
    stderr: "piped",
  });
}

/** Runs `gurt ARGS` with the given environment added, and optional standard input. */
export async function gurt(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; cwd?: string } = {},
): Promise<GurtRun> {
  const child = gurtCommand(args, {
    env: options.env,
    cwd: options.cwd,
    stdin: options.stdin === undefined ? "null" : "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Reads `reader` until what it has read holds a newline (or the stream ends): all it read. */
export async function readToNewline(reader: ReadableStreamDefaultReader<string>): Promise<string> {
  let text = "";
  while (!text.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
  }
  return text;
}

/**
 * Reads a child's stream until `done` says what it holds so far is enough (or the stream ends):
 * that text, and the rest of the stream read on in the background.
 */
export async function readUntil(
  stream: ReadableStream<Uint8Array>,
  done: (text: string) => boolean,
): Promise<{ text: string; rest: Promise<string> }> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!done(text)) {
    const { done: ended, value } = await reader.read();
    if (ended) return { text, rest: Promise.resolve("") };
    text += value;
  }
  const rest = (async () => {
    let more = "";
    for (;;) {
      const { done: ended, value } = await reader.read();
      if (ended) return more;
      more += value;
    }
  })();
  return { text, rest };
}

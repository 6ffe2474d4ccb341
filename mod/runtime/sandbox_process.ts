/**
 * Runs one bubblewrap sandbox as a process group under the call's limits: it joins the call's pids
 * cgroup and sets its address-space limit before bubblewrap starts (a small sh wrapper, so no
 * process of the call ever runs outside them); the whole group is killed at the time limit or once
 * the output passes its cap; every process of the call is gone before this returns.
 */
import type { CallGroup } from "./process_cap.ts";

/** The limits of one sandboxed run. */
export interface SandboxLimits {
  timeoutMs: number;
  memoryBytes: number;
  maxOutputBytes: number;
}

/** How a sandboxed run ended. */
export type SandboxEnd =
  | {
    kind: "exited";
    /** The exit status, or 128 + the signal number for a command killed by a signal. */
    status: number;
    output: Uint8Array;
    truncated: boolean;
    /** bubblewrap's and the wrapper's own complaints, never shown to the model. */
    stderr: string;
  }
  | { kind: "timed_out" };

/** Joins the group, sets the limits, then becomes bubblewrap. Failures print `gurt-sandbox:`. */
const WRAPPER = [
  'if [ -n "$1" ]; then echo $$ > "$1" || { echo "gurt-sandbox: cannot join the pids cgroup" >&2; exit 125; }; fi',
  'ulimit -c 0 && ulimit -v "$2" || { echo "gurt-sandbox: cannot set the memory limit" >&2; exit 125; }',
  "shift 2",
  'exec "$@"',
].join("\n");

const MAX_STDERR = 4096;

/** The argv that runs bubblewrap with the wrapper, for a group's procs file (or none). */
export function wrappedArgv(
  bwrapArgs: readonly string[],
  options: { bwrap: string; procsFile: string | null; memoryBytes: number },
): string[] {
  const kib = Math.floor(options.memoryBytes / 1024);
  return [
    "/bin/sh",
    "-c",
    WRAPPER,
    "gurt-sandbox",
    options.procsFile ?? "",
    String(kib),
    options.bwrap,
    ...bwrapArgs,
  ];
}

/** Runs bubblewrap with `bwrapArgs` under the limits and returns how it ended. */
export async function runSandbox(
  bwrapArgs: readonly string[],
  options: { bwrap: string; stdin: string | null; limits: SandboxLimits; group: CallGroup | null },
): Promise<SandboxEnd> {
  const argv = wrappedArgv(bwrapArgs, {
    bwrap: options.bwrap,
    procsFile: options.group?.procsFile ?? null,
    memoryBytes: options.limits.memoryBytes,
  });
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    stdin: options.stdin === null ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    detached: true,
    clearEnv: true,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
  }).spawn();
  let killed = false;
  const killGroup = (): void => {
    if (killed) return;
    killed = true;
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      // The group has already gone.
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, options.limits.timeoutMs);
  try {
    const writing = options.stdin === null ? Promise.resolve() : writeAll(child, options.stdin);
    const [output, stderr, status] = await Promise.all([
      readCapped(child.stdout, options.limits.maxOutputBytes, killGroup),
      readCapped(child.stderr, MAX_STDERR, () => {}),
      child.status,
      writing,
    ]);
    if (timedOut) return { kind: "timed_out" };
    const code = status.signal === null ? status.code : 128 + signalNumber(status.signal);
    return {
      kind: "exited",
      status: code,
      output: output.bytes,
      truncated: output.truncated,
      stderr: new TextDecoder().decode(stderr.bytes),
    };
  } finally {
    clearTimeout(timer);
    killGroup();
    await options.group?.remove();
  }
}

async function writeAll(child: Deno.ChildProcess, text: string): Promise<void> {
  const writer = child.stdin.getWriter();
  try {
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
  } catch {
    // The sandbox stopped reading (it failed or was killed); its exit says what happened.
  }
}

/** Reads a stream to its end, keeping at most `max` bytes; calls `over` once when it passes it. */
async function readCapped(
  stream: ReadableStream<Uint8Array>,
  max: number,
  over: () => void,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let truncated = false;
  for await (const chunk of stream) {
    const room = max - kept;
    if (chunk.length <= room) {
      chunks.push(chunk);
      kept += chunk.length;
      continue;
    }
    if (room > 0) {
      chunks.push(chunk.subarray(0, room));
      kept += room;
    }
    if (!truncated) {
      truncated = true;
      over();
    }
  }
  const bytes = new Uint8Array(kept);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { bytes, truncated };
}

function signalNumber(signal: Deno.Signal): number {
  const numbers: Partial<Record<Deno.Signal, number>> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGQUIT: 3,
    SIGILL: 4,
    SIGTRAP: 5,
    SIGABRT: 6,
    SIGBUS: 7,
    SIGFPE: 8,
    SIGKILL: 9,
    SIGUSR1: 10,
    SIGSEGV: 11,
    SIGUSR2: 12,
    SIGPIPE: 13,
    SIGALRM: 14,
    SIGTERM: 15,
  };
  return numbers[signal] ?? 0;
}

/**
 * Starting a command as the leader of its own process group, so that one signal to `-pgid`
 * reaches everything it starts. In order of cost:
 * - the guest's own session helper (session_helper.c), written out by `gurt guest` at start: the
 *   price of a bare spawn; the guest's watcher (group_watcher.ts) then holds the group, so that
 *   it dies with the guest.
 * - util-linux `setsid`, started with posix_spawn: one more dynamically linked exec (≈ 0.65 ms).
 * - Deno's `detached: true`, which forks the whole daemon (1–3 ms, growing with its memory).
 */
import { GuestError } from "./errors.ts";
import { helperFailure } from "./session_helper.ts";

/** Where util-linux's setsid may live; the first that starts is used from then on. */
const SETSID_PATHS = ["/usr/bin/setsid", "/bin/setsid"];

/** How a command was started: each launcher reports a program that could not start its own way. */
export type Launcher = "helper" | "setsid" | "detached";

/** The util-linux setsid in use: unknown yet, the path found, or null for none. */
let setsid: string | null | undefined;

/** What to start and how to wire its standard streams. */
export interface GroupLaunch {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: "null" | "piped";
  /** The session helper `gurt guest` wrote and checked, or null for util-linux setsid. */
  helper: string | null;
}

/** A started command and the launcher that started it. */
export interface GroupChild {
  child: Deno.ChildProcess;
  launcher: Launcher;
}

/** Spawns `argv` as a new process group leader (its pid is the group id). */
export function spawnInGroup(launch: GroupLaunch): GroupChild {
  const options = {
    cwd: launch.cwd,
    env: launch.env,
    clearEnv: true,
    stdin: launch.stdin,
    stdout: "piped",
    stderr: "piped",
  } as const;
  try {
    if (launch.helper !== null) {
      const child = new Deno.Command(launch.helper, { ...options, args: launch.argv }).spawn();
      return { child, launcher: "helper" };
    }
    const candidates = setsid === undefined ? SETSID_PATHS : setsid === null ? [] : [setsid];
    for (const path of candidates) {
      try {
        const child = new Deno.Command(path, { ...options, args: ["--", ...launch.argv] })
          .spawn();
        setsid = path;
        return { child, launcher: "setsid" };
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    setsid = null;
    const child = new Deno.Command(launch.argv[0], {
      ...options,
      args: launch.argv.slice(1),
      detached: true,
    }).spawn();
    return { child, launcher: "detached" };
  } catch (error) {
    throw notStarted(launch.argv[0], error);
  }
}

/**
 * When the launcher could not execute the program it exits 126 or 127 with one line on stderr;
 * that is the program failing to start, not the program's own exit. Returns the reason, or
 * undefined.
 */
export function launchFailure(
  started: { launcher: Launcher; argv0: string },
  output: { code: number; stdout: number; stderr: string },
): string | undefined {
  if (started.launcher === "detached" || output.stdout !== 0) return undefined;
  if (started.launcher === "helper") return helperFailure(output.code, output.stderr);
  if (output.code !== 126 && output.code !== 127) return undefined;
  const prefix = `setsid: failed to execute ${started.argv0}: `;
  if (
    !output.stderr.startsWith(prefix) || output.stderr.indexOf("\n") !== output.stderr.length - 1
  ) {
    return undefined;
  }
  return output.stderr.slice(prefix.length, -1);
}

function notStarted(program: string, error: unknown): GuestError {
  const why = error instanceof Deno.errors.NotFound
    ? "no such program"
    : error instanceof Error
    ? error.message
    : String(error);
  return new GuestError("exec_failed", 400, `cannot run ${JSON.stringify(program)}: ${why}`);
}

/**
 * Starting a command as the leader of its own process group, so that one signal to `-pgid`
 * reaches everything it starts. Deno's `detached: true` does this with fork(), whose cost grows
 * with the daemon's memory (≈ 3–4 ms here); util-linux `setsid`, started with posix_spawn, costs
 * one extra exec (≈ 0.5 ms). The guest uses setsid where it exists and `detached` otherwise.
 */
import { GuestError } from "./errors.ts";

/** Where util-linux's setsid may live; the first that starts is used from then on. */
const SETSID_PATHS = ["/usr/bin/setsid", "/bin/setsid"];
let launcher: string | null | undefined;

/** What to start and how to wire its standard streams. */
export interface GroupLaunch {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: "null" | "piped";
}

/** Spawns `argv` as a new process group leader (its pid is the group id). */
export function spawnInGroup(launch: GroupLaunch): Deno.ChildProcess {
  const options = {
    cwd: launch.cwd,
    env: launch.env,
    clearEnv: true,
    stdin: launch.stdin,
    stdout: "piped",
    stderr: "piped",
  } as const;
  try {
    const candidates = launcher === undefined ? SETSID_PATHS : launcher === null ? [] : [launcher];
    for (const setsid of candidates) {
      try {
        const child = new Deno.Command(setsid, { ...options, args: ["--", ...launch.argv] })
          .spawn();
        launcher = setsid;
        return child;
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
    }
    launcher = null;
    return new Deno.Command(launch.argv[0], {
      ...options,
      args: launch.argv.slice(1),
      detached: true,
    }).spawn();
  } catch (error) {
    throw notStarted(launch.argv[0], error);
  }
}

/**
 * When setsid could not execute the program it exits 126 or 127 with one line on stderr; that is
 * the program failing to start, not the program's own exit. Returns the reason, or undefined.
 */
export function launchFailure(
  argv0: string,
  output: { code: number; stdout: number; stderr: string },
): string | undefined {
  if (launcher === null || launcher === undefined) return undefined;
  if ((output.code !== 126 && output.code !== 127) || output.stdout !== 0) return undefined;
  const prefix = `setsid: failed to execute ${argv0}: `;
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

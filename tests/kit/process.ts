/** Processes in tests: a shell script run as another user, and whether a process still runs. */

/** What a finished command printed and how it exited. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `sh -c script` as `who` (as root): its exit code, stdout and stderr. */
export async function runAs(who: { uid: number; gid: number }, script: string): Promise<Ran> {
  const out = await new Deno.Command("sh", {
    args: ["-c", script],
    uid: who.uid,
    gid: who.gid,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Whether a process exists and is not a zombie. */
export function processAlive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

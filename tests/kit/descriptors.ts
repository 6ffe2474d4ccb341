/**
 * Looking at file descriptors from the host, for the tests that a core's inherited descriptors
 * reach no sandboxed process: a root-only secret to hold them on, `ls -l /proc/PID/fd` read back,
 * and a process tree with every descriptor each process holds.
 */

/** A root-only file holding `marker`, in a folder of its own (prefix `prefix`); remove the folder after. */
export async function secretFile(
  marker: string,
  prefix: string,
): Promise<{ dir: string; path: string }> {
  const dir = await Deno.makeTempDir({ prefix });
  const path = `${dir}/secret`;
  await Deno.writeTextFile(path, `${marker}\n`, { mode: 0o600 });
  return { dir, path };
}

/** What `ls -l /proc/PID/fd` said: each descriptor and what it points at. */
export function listedFds(text: string): { fd: number; target: string }[] {
  return text.split("\n").flatMap((line) => {
    const found = / (\d+) -> (.*)$/.exec(line);
    return found === null ? [] : [{ fd: Number(found[1]), target: found[2] }];
  });
}

/** One process seen from the host, with each descriptor it held and what it points at. */
export interface HeldFds {
  pid: number;
  name: string;
  fds: { fd: number; target: string }[];
}

/** The parent pid of each process, from /proc/PID/stat. */
async function parents(): Promise<Map<number, number>> {
  const found = new Map<number, number>();
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`).catch(() => null);
    if (stat === null) continue;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    found.set(Number(entry.name), Number(fields[1]));
  }
  return found;
}

/** The process `top`, then all its descendants, each with the descriptors it holds. */
export async function processTree(top: number): Promise<HeldFds[]> {
  const ppid = await parents();
  const pids = [top];
  for (let i = 0; i < pids.length; i++) {
    for (const [pid, parent] of ppid) if (parent === pids[i]) pids.push(pid);
  }
  const held: HeldFds[] = [];
  for (const pid of pids) {
    const name = (await Deno.readTextFile(`/proc/${pid}/comm`).catch(() => "?")).trim();
    const fds: { fd: number; target: string }[] = [];
    for await (const entry of Deno.readDir(`/proc/${pid}/fd`)) {
      const target = await Deno.readLink(`/proc/${pid}/fd/${entry.name}`).catch(() => "?");
      fds.push({ fd: Number(entry.name), target });
    }
    held.push({ pid, name, fds: fds.sort((a, b) => a.fd - b.fd) });
  }
  return held;
}

/**
 * The process limit of a call: a pids cgroup per running call, under /sys/fs/cgroup/pids/gurt
 * (cgroup v1), and beside it a memory cgroup under /sys/fs/cgroup/memory/gurt. RLIMIT_NPROC cannot do this job: the kernel does not apply it to root, and for any
 * other user it counts every process of that user on the box. Deno refuses a scoped role any
 * access to /sys, so the sandbox's wrapper (sandbox_process.ts) makes and joins the group; the core
 * only picks its name. Groups are slots, reused once their call has ended: making and removing a
 * cgroup per call cost several milliseconds each. Every process of a call lives in the call's pid
 * namespace and dies with it, so a slot is empty again when its call returns. Each runtime has its
 * own folder of slots, so two cores (or tests) never share a group; a closed runtime removes its
 * folder, and a starting one removes those of processes that have gone.
 */

/** Where the wrapper makes the pids cgroups of calls: one folder per runtime, `<pid>-<n>`. */
export const PIDS_CGROUP_ROOT = "/sys/fs/cgroup/pids/gurt";

/**
 * The memory cgroup folder beside a pids one (`/sys/fs/cgroup/memory/…` for
 * `/sys/fs/cgroup/pids/…`), where each call's memory, the files it keeps in its tmpfs and memfds
 * included, is capped; null for a folder that is not under the pids hierarchy.
 */
export function memoryCgroupRoot(pidsRoot: string): string | null {
  const prefix = "/sys/fs/cgroup/pids/";
  return pidsRoot.startsWith(prefix)
    ? `/sys/fs/cgroup/memory/${pidsRoot.slice(prefix.length)}`
    : null;
}

/**
 * A call's memory cgroup limit: twice its address-space limit (memory_bytes), which its processes
 * and what it holds in files in memory (its /tmp, /dev/shm and memfds) share. Past it the kernel
 * kills a process of the call.
 */
export function callMemoryLimit(memoryBytes: number): number {
  return 2 * memoryBytes;
}

let runtimes = 0;

/** A new runtime's own folder of slots under the root, named by this process and a counter. */
export function runtimeCgroupRoot(root: string = PIDS_CGROUP_ROOT): string {
  runtimes++;
  return `${root}/${Deno.pid}-${runtimes}`;
}

/**
 * Removes the slot folders of runtimes whose process has gone (their groups are empty: every
 * process of a call dies with its sandbox), and, given `own`, this runtime's own. Runs as a small
 * sh script: Deno refuses a scoped role any access to /sys.
 */
export async function sweepCgroups(root: string, own: string | null = null): Promise<void> {
  const script = `root=$1 own=$2
for d in "$root"/*-*; do
  [ -d "$d" ] || continue
  pid=\${d##*/}
  pid=\${pid%%-*}
  if [ "$d" = "$own" ] || [ ! -d "/proc/$pid" ]; then
    for g in "$d"/call-*; do [ -d "$g" ] && rmdir "$g"; done
    rmdir "$d"
  fi
done 2>/dev/null
exit 0`;
  await cgroupScript(script, ["gurt-sweep", root, own ?? ""]);
}

/**
 * Kills every process left in a call's pids cgroup: what a call left behind after bubblewrap was
 * killed, which its pid namespace should already have taken.
 */
export async function killGroup(plan: CgroupPlan): Promise<void> {
  const script = `g=$1/$2
for i in 1 2 3 4 5 6 7 8 9 10; do
  pids=$(cat "$g/cgroup.procs" 2>/dev/null)
  [ -n "$pids" ] || exit 0
  kill -9 $pids 2>/dev/null
  sleep 0.02
done`;
  await cgroupScript(script, ["gurt-kill", plan.root, plan.name]).catch(() => {});
}

/** Runs a small sh script on the cgroup files, as root: Deno refuses a scoped role any access to /sys. */
async function cgroupScript(script: string, args: string[]): Promise<void> {
  await new Deno.Command("/bin/sh", {
    args: ["-c", script, ...args],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    clearEnv: true,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
  }).output();
}

/** What the wrapper needs to put one call in its own pids cgroup, and its memory cgroup. */
export interface CgroupPlan {
  root: string;
  /** The slot's directory name, `call-<n>`, the same in both hierarchies. */
  name: string;
  maxProcesses: number;
  /** The folder of memory cgroup slots, or null where the call's memory is not capped so. */
  memoryRoot: string | null;
}

/** The plan for a call that holds `slot`. */
export function cgroupPlan(
  maxProcesses: number,
  options: { slot: number; root?: string; memoryRoot?: string | null },
): CgroupPlan {
  const root = options.root ?? PIDS_CGROUP_ROOT;
  return {
    root,
    name: `call-${options.slot}`,
    maxProcesses,
    memoryRoot: options.memoryRoot === undefined ? memoryCgroupRoot(root) : options.memoryRoot,
  };
}

/** The slots of the calls running now: a call takes the lowest free one and gives it back. */
export class CgroupSlots {
  readonly #taken = new Set<number>();

  /** Takes the lowest free slot. */
  take(): number {
    let slot = 0;
    while (this.#taken.has(slot)) slot++;
    this.#taken.add(slot);
    return slot;
  }

  /** Gives a slot back once its call has ended. */
  give(slot: number): void {
    this.#taken.delete(slot);
  }
}

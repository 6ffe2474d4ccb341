/**
 * The process limit of a call: a pids cgroup per call, under /sys/fs/cgroup/pids/gurt (cgroup v1).
 * RLIMIT_NPROC cannot do this job: the kernel does not apply it to root, and for any other user it
 * counts every process of that user on the box. Deno refuses a scoped role any access to /sys, so
 * the sandbox's wrapper (sandbox_process.ts) makes, joins and sweeps the groups itself; the core
 * only names them. The group's processes all live in the call's pid namespace and die with it.
 */

/** Where the wrapper makes one pids cgroup per call. */
export const PIDS_CGROUP_ROOT = "/sys/fs/cgroup/pids/gurt";

/** Groups older than this are swept (removed if empty) by the next call's wrapper. */
export const SWEEP_AFTER_MS = 5000;

/** What the wrapper needs to put one call in its own pids cgroup. */
export interface CgroupPlan {
  root: string;
  /** `<ms since the epoch>-<uuid>`: the time lets a later wrapper sweep it. */
  name: string;
  maxProcesses: number;
  /** Groups named before this time are removed if empty. */
  sweepBefore: number;
}

/** The plan for one call started at `now` (ms since the epoch). */
export function cgroupPlan(
  maxProcesses: number,
  options: { now: number; root?: string },
): CgroupPlan {
  return {
    root: options.root ?? PIDS_CGROUP_ROOT,
    name: `${options.now}-${crypto.randomUUID()}`,
    maxProcesses,
    sweepBefore: options.now - SWEEP_AFTER_MS,
  };
}

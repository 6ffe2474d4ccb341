/**
 * The process limit of a call: a pids cgroup per running call, under /sys/fs/cgroup/pids/gurt
 * (cgroup v1). RLIMIT_NPROC cannot do this job: the kernel does not apply it to root, and for any
 * other user it counts every process of that user on the box. Deno refuses a scoped role any
 * access to /sys, so the sandbox's wrapper (sandbox_process.ts) makes and joins the group; the core
 * only picks its name. Groups are slots, reused once their call has ended: making and removing a
 * cgroup per call cost several milliseconds each. Every process of a call lives in the call's pid
 * namespace and dies with it, so a slot is empty again when its call returns.
 */

/** Where the wrapper makes the pids cgroups of calls. */
export const PIDS_CGROUP_ROOT = "/sys/fs/cgroup/pids/gurt";

/** What the wrapper needs to put one call in its own pids cgroup. */
export interface CgroupPlan {
  root: string;
  /** The slot's directory name, `call-<n>`. */
  name: string;
  maxProcesses: number;
}

/** The plan for a call that holds `slot`. */
export function cgroupPlan(
  maxProcesses: number,
  options: { slot: number; root?: string },
): CgroupPlan {
  return { root: options.root ?? PIDS_CGROUP_ROOT, name: `call-${options.slot}`, maxProcesses };
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

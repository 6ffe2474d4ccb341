/**
 * The process limit of a call: a pids cgroup per call, under /sys/fs/cgroup/pids/gurt (cgroup v1).
 * RLIMIT_NPROC cannot do this job: the kernel does not apply it to root, and for any other user it
 * counts every process of that user on the box. Where no writable pids hierarchy exists the core
 * says so at start, and calls run without a process cap (the time and memory limits still hold).
 */

/** Where the core makes one pids cgroup per call. */
export const PIDS_CGROUP_ROOT = "/sys/fs/cgroup/pids/gurt";

/** One call's pids cgroup. */
export class CallGroup {
  constructor(readonly dir: string) {}

  /** The file a process writes its pid into to join the group. */
  get procsFile(): string {
    return `${this.dir}/cgroup.procs`;
  }

  /** The pids of the processes in the group now. */
  async pids(): Promise<number[]> {
    const text = await Deno.readTextFile(this.procsFile).catch(() => "");
    return text.split("\n").filter((line) => line !== "").map(Number);
  }

  /** Kills every process still in the group, then removes the group once it is empty. */
  async remove(): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt++) {
      for (const pid of await this.pids()) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      try {
        await Deno.remove(this.dir);
        return;
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return;
        // Busy: the killed processes are still being reaped by the kernel.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    throw new Error(`the pids cgroup ${this.dir} could not be removed`);
  }
}

/** Makes the per-call pids cgroups; null from `open` where the box has no writable hierarchy. */
export class PidsCgroups {
  private constructor(readonly root: string) {}

  /** Opens the hierarchy, removing groups a previous core left empty; null if it is unusable. */
  static async open(root: string = PIDS_CGROUP_ROOT): Promise<PidsCgroups | null> {
    try {
      await Deno.mkdir(root, { recursive: true });
      for await (const entry of Deno.readDir(root)) {
        if (entry.isDirectory) await Deno.remove(`${root}/${entry.name}`).catch(() => {});
      }
      const cgroups = new PidsCgroups(root);
      const probe = await cgroups.create(2);
      await probe.remove();
      return cgroups;
    } catch {
      return null;
    }
  }

  /** A new group that allows at most `maxProcesses` processes at once. */
  async create(maxProcesses: number): Promise<CallGroup> {
    const dir = `${this.root}/${crypto.randomUUID()}`;
    await Deno.mkdir(dir);
    try {
      await Deno.writeTextFile(`${dir}/pids.max`, `${maxProcesses}\n`);
    } catch (error) {
      await Deno.remove(dir).catch(() => {});
      throw error;
    }
    return new CallGroup(dir);
  }
}

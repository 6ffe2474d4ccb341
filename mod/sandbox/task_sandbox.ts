/**
 * Starts a task's worker in the task's sandbox, in three stages: a sh script as the core's user
 * (root on a real box) joins the task's cgroup and opens the seccomp filter and the box CA bundle
 * (task_limits.ts);
 * setpriv drops to the task's user with no group, no capability and no_new_privs; bubblewrap, as
 * that user, builds the sandbox (task_sandbox_args.ts) and runs the task init, which opens the
 * doors' loopback ports and runs the worker. The process the core holds is bubblewrap's: stopping
 * its process group ends the sandbox, and with it every process of the task.
 */
import { probeSystemLayout, SYSTEM_PATHS, type SystemLayout } from "../runtime/mod.ts";
import { hostFilterArch, toolSeccompFilter } from "../runtime/mod.ts";
import { writeFileAtomic } from "../common/mod.ts";
import { taskInitElf } from "./task_init.ts";
import {
  type CgroupKind,
  endTaskGroup,
  probeCgroups,
  STAGE_ONE,
  stageOneArgs,
  type TaskLimits,
} from "./task_limits.ts";
import { TASK_ETC_PATHS } from "./etc_paths.ts";
import { type Door, taskSandboxArgs } from "./task_sandbox_args.ts";

/** The program that drops root (as root) and sets no_new_privs before bubblewrap runs. */
const SETPRIV = "/usr/bin/setpriv";

/** A task's Linux identity, as the sandbox needs it. */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/** What one worker's sandbox holds, and what runs in it. */
export interface WorkerSpec {
  task: string;
  /** tasks/<id>/home: writable, the working directory. */
  home: string;
  /** The core's sockets the task init opens inside: on a loopback port, or at a path. */
  doors: readonly Door[];
  /** Files bound in read-only at their own paths. */
  readOnly: readonly string[];
  argv: readonly string[];
  env: Record<string, string>;
  /** The task's user; null where the core is not root and tasks run as its own user. */
  user: SandboxUser | null;
  /**
   * The host path of the box CA bundle (the box CA's `bundle.pem`, in a folder only root may
   * read), copied read-only to CA_BUNDLE_PATH inside; null or absent for none.
   */
  caBundle?: string | null;
  /**
   * "program": the program's stdin and stdout are the core's pipes (an app's MCP server speaks on
   * them), and the task init comes from a file; absent: the init comes on stdin, which the
   * program then finds at its end.
   */
  stdio?: "program";
  /** The sandbox's host name (`gurt-task-<task>` when absent). */
  hostname?: string;
  /** The owner's workdirs and their covers, bound after the home (TaskSandboxPlan's binds). */
  binds?: readonly { source: string; dest: string; writable: boolean }[];
  /** The working directory, when not the home. */
  cwd?: string;
  /**
   * Whether mknod and mknodat are refused outright (a task with a writable workdir: no FIFO in the
   * owner's folder), with the second seccomp filter.
   */
  noNodes?: boolean;
}

/** How the box's task sandboxes are made: probed once, when the core starts. */
export class TaskSandboxes {
  private constructor(
    readonly kind: CgroupKind,
    readonly layout: SystemLayout,
    readonly filter: string,
    readonly program: readonly string[],
    readonly limits: TaskLimits,
    readonly tmpBytes: number,
    /** The task init as a file in the state folder, for a sandbox whose stdin is its program's. */
    readonly initFile: string,
    /** The filter that also refuses mknod, for a task with a writable workdir. */
    readonly nodeFilter: string,
  ) {}

  /**
   * Probes the system layout and the cgroups, writes the seccomp filter into `stateDir` (a folder
   * only root may read: BOX_HOME/run), and says in `notices` which limits are enforced.
   */
  static async prepare(
    stateDir: string,
    options: { limits: TaskLimits; tmpBytes: number; program: readonly string[] },
  ): Promise<{ sandboxes: TaskSandboxes; notices: string[] }> {
    const arch = hostFilterArch();
    if (arch === null) {
      throw new Error(
        `tasks cannot be sandboxed on ${Deno.build.arch}: the seccomp filter has no table for it; see runbook.md#task-sandbox-failed`,
      );
    }
    const filter = `${stateDir}/task-seccomp.bpf`;
    await writeFileAtomic(filter, toolSeccompFilter(arch, { anyDeathSignal: true }));
    const nodeFilter = `${stateDir}/task-seccomp-nodes.bpf`;
    await writeFileAtomic(
      nodeFilter,
      toolSeccompFilter(arch, { anyDeathSignal: true, noNodes: true }),
    );
    const layout = await probeSystemLayout([...SYSTEM_PATHS, ...TASK_ETC_PATHS]);
    const { kind, notice } = await probeCgroups();
    const program = await programFolders(options.program);
    const initFile = `${stateDir}/task-init`;
    await writeFileAtomic(initFile, taskInitElf(), { mode: 0o600 });
    return {
      sandboxes: new TaskSandboxes(
        kind,
        layout,
        filter,
        program,
        options.limits,
        options.tmpBytes,
        initFile,
        nodeFilter,
      ),
      notices: [notice],
    };
  }

  /** Starts a worker in its task's sandbox; the child is bubblewrap, leader of its own group. */
  async spawn(spec: WorkerSpec): Promise<Deno.ChildProcess> {
    const caBundle = spec.caBundle ?? null;
    const bwrap = taskSandboxArgs({
      task: spec.task,
      home: spec.home,
      doors: spec.doors,
      identity: await writeIdentity(spec),
      readOnly: spec.readOnly,
      layout: this.layout,
      program: this.program,
      tmpBytes: this.tmpBytes,
      argv: spec.argv,
      caBundle: caBundle !== null,
      initOnFd: spec.stdio === "program",
      hostname: spec.hostname,
      binds: spec.binds,
      cwd: spec.cwd,
    });
    const stage = stageOneArgs(spec.task, {
      kind: this.kind,
      limits: this.limits,
      filter: spec.noNodes === true ? this.nodeFilter : this.filter,
      caBundle,
      init: spec.stdio === "program" ? this.initFile : null,
    });
    const child = new Deno.Command("/bin/sh", {
      args: [
        "-c",
        STAGE_ONE,
        "gurt-task-sandbox",
        ...stage,
        SETPRIV,
        ...dropTo(spec.user),
        "--",
        "/usr/bin/bwrap",
        ...bwrap,
      ],
      env: spec.env,
      clearEnv: true,
      cwd: "/",
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    if (spec.stdio === "program") return child;
    // The task init reaches bubblewrap on stdin, which makes it the sandbox's INIT_PATH; the
    // worker's stdin is then that pipe at its end.
    const writer = child.stdin.getWriter();
    await writer.write(taskInitElf()).catch(() => {});
    await writer.close().catch(() => {});
    return child;
  }

  /** Kills whatever is left of a task's processes in its cgroup, and removes the group. */
  async end(task: string): Promise<void> {
    await endTaskGroup(task, this.kind);
  }
}

/**
 * Writes the task's own /etc/passwd and /etc/group beside its home (in tasks/<id>, which only root
 * may write; 0644, for bubblewrap to bind as the task's user): root, nobody and the task's user, so
 * that no task reads the names of the others. A task running as the core's own user (no root) gets
 * that user's line as the host has it.
 */
async function writeIdentity(spec: WorkerSpec): Promise<{ passwd: string; group: string }> {
  const dir = spec.home.slice(0, spec.home.lastIndexOf("/"));
  const uid = spec.user?.uid ?? Deno.uid() ?? 0;
  const gid = spec.user?.gid ?? Deno.gid() ?? 0;
  const users = ["root:x:0:0:root:/root:/usr/sbin/nologin"];
  const groups = ["root:x:0:"];
  if (uid !== 0) {
    users.push(`box-${spec.task}:x:${uid}:${gid}:gurt task:${spec.home}:/usr/sbin/nologin`);
    groups.push(`box-${spec.task}:x:${gid}:`);
  }
  users.push("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin");
  groups.push("nogroup:x:65534:");
  const places = { passwd: `${dir}/passwd`, group: `${dir}/group` };
  for (const [path, lines] of [[places.passwd, users], [places.group, groups]] as const) {
    // The same for every start of the task: written (and synced) only when it is not there yet.
    const text = lines.join("\n") + "\n";
    if (await Deno.readTextFile(path).catch(() => null) === text) continue;
    await writeFileAtomic(path, text, { mode: 0o644 });
  }
  return places;
}

/**
 * setpriv's options: as root, the task's uid and gid with no supplementary group, no capability
 * in any set; always no_new_privs, so no setuid or setgid file, nor a file capability, gains any
 * process of the task anything.
 */
export function dropTo(user: SandboxUser | null): string[] {
  const always = ["--no-new-privs"];
  if (user === null) return always;
  return [
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    "--clear-groups",
    "--inh-caps=-all",
    "--bounding-set=-all",
    ...always,
  ];
}

/**
 * The folders of gurt's own program that the sandbox shows read-only: each given path's real
 * location, less those already under a system folder or under another of them.
 */
async function programFolders(paths: readonly string[]): Promise<string[]> {
  const real: string[] = [];
  for (const path of paths) {
    const found = await Deno.realPath(path).catch(() => null);
    if (found !== null) real.push(found);
  }
  const system = ["/usr", "/bin", "/sbin", "/lib", "/lib64"];
  const under = (path: string, folder: string) =>
    path === folder || path.startsWith(folder.endsWith("/") ? folder : `${folder}/`);
  return real.filter((path, i) =>
    !system.some((folder) => under(path, folder)) &&
    !real.some((other, j) => j !== i && under(path, other) && (other !== path || j < i))
  );
}

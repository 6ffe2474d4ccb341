/**
 * A task's limits: memory (its processes and the files in its /tmp and /dev/shm), processes and
 * CPU, enforced with a cgroup per task: cgroup v2 where the box has its controllers, else the v1
 * memory, pids and cpu hierarchies, under `gurt-tasks/<task>`. Deno refuses a scoped role any
 * access to /sys, so small sh scripts run as root do the cgroup work: the sandbox's first stage
 * (STAGE_ONE) makes and joins the group before it drops to the task's user, and the core's end of
 * a task kills what is left in it and removes it.
 */

/** Which cgroups the box gives tasks. */
export type CgroupKind = "v2" | "v1" | "none";

/** The limits of one task, from gurt.toml's [tasks]. */
export interface TaskLimits {
  memoryBytes: number;
  maxProcesses: number;
  /** CPUs, such as 1.5: a quota of that many 100 ms periods per 100 ms. */
  cpus: number;
}

/** The open files each process of a task may have (RLIMIT_NOFILE, soft and hard). */
export const MAX_FILES = 4096;

/** The folder of the tasks' cgroups, in each hierarchy. */
export const TASKS_CGROUP = "gurt-tasks";

const PROBE = `c=/sys/fs/cgroup
if [ "$(id -u)" != 0 ]; then echo none; exit 0; fi
if [ -f $c/cgroup.controllers ]; then
  have=$(cat $c/cgroup.controllers)
  case " $have " in *" memory "*) case " $have " in *" pids "*) echo v2; exit 0;; esac;; esac
fi
if [ -d $c/memory ] && [ -d $c/pids ] && [ -d $c/cpu ] && [ -w $c/pids ]; then echo v1; exit 0; fi
echo none`;

/** Which cgroups this box has for tasks, and the line `gurt serve` says it with. */
export async function probeCgroups(): Promise<{ kind: CgroupKind; notice: string }> {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", PROBE],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin" },
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const said = new TextDecoder().decode(out.stdout).trim();
  const kind: CgroupKind = said === "v2" || said === "v1" ? said : "none";
  const notice = kind === "none"
    ? "gurt: task limits: not enforced (no cgroup controllers this core may use: run as root on a box with cgroup v2 or the v1 memory, pids and cpu hierarchies); see runbook.md#task-limits-unenforced"
    : `gurt: task limits: cgroup ${kind} (memory, processes and CPU of each task, under ${TASKS_CGROUP}/)`;
  return { kind, notice };
}

/**
 * The sandbox's first stage, a sh script run as the core's user: joins the task's cgroup (made with
 * its limits), opens the seccomp filter on fd 9 and, when it is given one, the box CA bundle on fd 8
 * (root-only on the host: bubblewrap, as the task's user, could not open it), then execs the rest
 * of its arguments (setpriv, then bubblewrap). Arguments: kind, task, memory bytes, processes, CPU
 * quota (µs per 100 ms), filter path, bundle path (empty for none), then the command. A failure
 * says `gurt-task-sandbox: …` on stderr and exits 125.
 */
export const STAGE_ONE = `kind=$1 task=$2 mem=$3 pids=$4 quota=$5 filter=$6 ca=$7 init=$8
shift 8
fail() { echo "gurt-task-sandbox: $*; see runbook.md#task-sandbox-failed" >&2; exit 125; }
c=/sys/fs/cgroup
case $kind in
v2)
  base=$c/${TASKS_CGROUP}
  [ -d $base ] || mkdir $base 2>/dev/null || [ -d $base ] || fail "cannot make $base"
  echo "+memory +pids +cpu" >$c/cgroup.subtree_control 2>/dev/null
  echo "+memory +pids +cpu" >$base/cgroup.subtree_control 2>/dev/null
  g=$base/$task
  [ -d $g ] || mkdir $g || fail "cannot make $g"
  echo $mem >$g/memory.max || fail "cannot limit the memory of $g"
  echo 0 >$g/memory.swap.max 2>/dev/null
  echo $pids >$g/pids.max || fail "cannot limit the processes of $g"
  echo "$quota 100000" >$g/cpu.max 2>/dev/null
  echo $$ >$g/cgroup.procs || fail "cannot join $g"
  ;;
v1)
  # One mkdir for the three: each program started costs this box a fork and an exec.
  m=$c/memory/${TASKS_CGROUP}/$task p=$c/pids/${TASKS_CGROUP}/$task u=$c/cpu/${TASKS_CGROUP}/$task
  [ -d $m ] && [ -d $p ] && [ -d $u ] || mkdir -p $m $p $u || fail "cannot make the cgroups of task $task"
  echo $mem >$c/memory/${TASKS_CGROUP}/$task/memory.limit_in_bytes || fail "cannot limit the memory of task $task"
  echo $mem >$c/memory/${TASKS_CGROUP}/$task/memory.memsw.limit_in_bytes 2>/dev/null
  # v1 counts socket buffers only here (v2 counts them in memory.max): a task's TCP on its own lo.
  k=$c/memory/${TASKS_CGROUP}/$task/memory.kmem.tcp.limit_in_bytes
  [ ! -e $k ] || echo $mem >$k || fail "cannot limit the socket memory of task $task"
  echo $pids >$c/pids/${TASKS_CGROUP}/$task/pids.max || fail "cannot limit the processes of task $task"
  echo 100000 >$c/cpu/${TASKS_CGROUP}/$task/cpu.cfs_period_us 2>/dev/null
  echo $quota >$c/cpu/${TASKS_CGROUP}/$task/cpu.cfs_quota_us || fail "cannot limit the CPU of task $task"
  for h in memory pids cpu; do
    echo $$ >$c/$h/${TASKS_CGROUP}/$task/cgroup.procs || fail "cannot join the $h cgroup of task $task"
  done
  ;;
esac
# Each process of the task may hold at most this many descriptors, soft and hard.
ulimit -n ${MAX_FILES} || fail "cannot limit the open files of task $task"
# "command" keeps sh from exiting on a redirection that fails, so that fail says why.
command exec 9<"$filter" || fail "cannot open the seccomp filter $filter"
[ -z "$ca" ] || command exec 8<"$ca" || fail "cannot open the box CA bundle $ca"
[ -z "$init" ] || command exec 7<"$init" || fail "cannot open the task init $init"
exec "$@"`;

/** STAGE_ONE's arguments before the command. */
export function stageOneArgs(
  task: string,
  options: {
    kind: CgroupKind;
    limits: TaskLimits;
    filter: string;
    caBundle: string | null;
    /** The task init's file, opened on TASK_INIT_FD; null: it comes on stdin. */
    init?: string | null;
  },
): string[] {
  const quota = Math.max(1000, Math.round(options.limits.cpus * 100_000));
  return [
    options.kind,
    task,
    String(options.limits.memoryBytes),
    String(options.limits.maxProcesses),
    String(quota),
    options.filter,
    options.caBundle ?? "",
    options.init ?? "",
  ];
}

const END = `kind=$1 task=$2
c=/sys/fs/cgroup
case $kind in
v2) groups=$c/${TASKS_CGROUP}/$task ;;
v1) groups="$c/pids/${TASKS_CGROUP}/$task $c/memory/${TASKS_CGROUP}/$task $c/cpu/${TASKS_CGROUP}/$task" ;;
*) exit 0 ;;
esac
first=\${groups%% *}
[ -d "$first" ] || exit 0
[ -f "$first/cgroup.kill" ] && echo 1 >"$first/cgroup.kill" 2>/dev/null
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  pids=$(cat "$first/cgroup.procs" 2>/dev/null)
  [ -n "$pids" ] || break
  kill -9 $pids 2>/dev/null
  sleep 0.05
done
for g in $groups; do rmdir "$g" 2>/dev/null; done
exit 0`;

/** Kills every process left in a task's cgroup and removes the group: the end of a task. */
export async function endTaskGroup(task: string, kind: CgroupKind): Promise<void> {
  if (kind === "none") return;
  await new Deno.Command("/bin/sh", {
    args: ["-c", END, "gurt-task-end", kind, task],
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
}

/**
 * Runs one bubblewrap sandbox under the call's limits and never as root. A small sh wrapper, still
 * root, picks the unprivileged uid the call runs as (the owner of its grant's paths), makes (once)
 * and joins the call's pids cgroup, sets the address-space limit and opens the seccomp filter; then
 * setpriv drops to that uid, with no supplementary groups, no capabilities and no_new_privs, and a
 * second stage opens the grant's paths as that uid and becomes bubblewrap. So no process of a call
 * ever runs outside its limits, with uid 0, or with a capability on the host, and what it writes
 * belongs to the owner of the folder it writes in. The sandbox is killed at the time limit or once
 * the output passes its cap; its pid namespace takes every process of the call with it.
 */
import { callMemoryLimit, type CgroupPlan, killGroup } from "./process_cap.ts";
import type { Mount } from "./run_spec.ts";

/** The limits of one sandboxed run. */
export interface SandboxLimits {
  timeoutMs: number;
  memoryBytes: number;
  maxOutputBytes: number;
}

/** How a sandboxed run ended. */
export type SandboxEnd =
  | {
    kind: "exited";
    /** The exit status, or 128 + the signal number for a command killed by a signal. */
    status: number;
    output: Uint8Array;
    truncated: boolean;
    /** bubblewrap's and the wrapper's own complaints, never shown to the model. */
    stderr: string;
  }
  | { kind: "timed_out" };

/** The uid (and gid) a call runs as when no path it mounts has an owner other than root. */
export const NOBODY = 65534;

/** The program that drops the wrapper's root before bubblewrap starts. */
export const SETPRIV = "/usr/bin/setpriv";

/**
 * The wrapper's first stage, as root, in bash (the one shell that can close a descriptor past 9):
 * $1 the cgroup root ("" for none), $2 the group's name, $3 its pids.max, $4 the memory cgroup root
 * ("" for none), $5 its limit in bytes, $6 the address-space limit in KiB, $7 the seccomp filter's
 * file, $8 setpriv, $9 how many mounts, then for each a mode (r or w) and a path; then bubblewrap
 * and its arguments. It first closes every descriptor but 0, 1 and 2: what the core holds without
 * close-on-exec (left open by whatever started it) would be open in the tool, a folder outside the
 * grant among them.
 *
 * The uid: the owner of the writable mounts, which must all have one owner and not root (a
 * writable folder of root's is refused: \`gurt-sandbox: root-owned path\`; of two users:
 * \`gurt-sandbox: mixed owners\`, both exit 123); with none writable, the first owner of a mount
 * that is not root; else nobody. The gid: that user's own group, else the path's group, never 0.
 * Each mount's path must be a folder or a file, not a link, a FIFO or a device. Unless the uid is
 * nobody, every folder above a mount's path must be a folder, not a link, of root's, the uid's or
 * the mount's owner's, and not writable by others unless it is sticky (/tmp): else someone else
 * could have put at the path whatever the tool would run as the owner of (another user's folder,
 * moved there by a task with a shell grant above it): \`gurt-sandbox: open parent\` and, on the
 * next line, the folder, exit 122. A path that does not exist: \`gurt-sandbox: missing path\`.
 * The second stage gets the device and inode of what this stage looked at, and mounts that object
 * or nothing. Other failures print \`gurt-sandbox:\` on stderr and exit 125.
 */
const STAGE_ROOT = `for fd in /proc/$$/fd/*; do
  fd=\${fd##*/}
  [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null
done
root=$1 name=$2 max=$3 mroot=$4 mlimit=$5 kib=$6 filter=$7 setpriv=$8 n=$9
shift 8
# Whether every folder above $3 is safe: a folder, of root's, $1's or $2's, that others cannot write
# (or sticky). stat looks at each without following it, so a link is no folder.
parents() {
  a=$1 b=$2 p=$3
  set --
  while [ "$p" != / ]; do p=\${p%/*}; p=\${p:-/}; set -- "$@" "$p"; done
  out=$(stat -c '%u %f' -- "$@") || return 1
  u=
  for w in $out; do
    if [ -z "$u" ]; then u=$w; continue; fi
    m=$((0x$w))
    [ $((m & 61440)) -eq 16384 ] && { [ "$u" = 0 ] || [ "$u" = "$a" ] || [ "$u" = "$b" ]; } &&
      { [ $((m & 18)) -eq 0 ] || [ $((m & 512)) -ne 0 ]; } || { bad=$1; return 1; }
    u=
    shift
  done
}
uid= gid= wuid= wgid= k=0 owners= ids=
for arg in "$@"; do
  k=$((k + 1))
  [ "$k" -eq 1 ] && continue
  [ "$k" -gt $((2 * n + 1)) ] && break
  if [ $((k % 2)) -eq 0 ]; then mode=$arg; continue; fi
  path=$arg
  [ -e "$path" ] || [ -L "$path" ] || { echo "gurt-sandbox: missing path" >&2; exit 124; }
  # Not a link, a FIFO or a device: opening one of those may block, or act.
  [ ! -L "$path" ] && { [ -d "$path" ] || [ -f "$path" ]; } ||
    { echo "gurt-sandbox: linked path" >&2; exit 124; }
  st=$(stat -c '%u %g %d:%i' -- "$path") ||
    { echo "gurt-sandbox: cannot look at a granted path" >&2; exit 125; }
  owner=\${st%% *} group=\${st#* } group=\${group% *}
  owners="$owners$owner " ids="$ids\${st##* } "
  if [ "$mode" = w ]; then
    [ "$owner" != 0 ] || { echo "gurt-sandbox: root-owned path" >&2; exit 123; }
    [ -z "$wuid" ] || [ "$wuid" = "$owner" ] || { echo "gurt-sandbox: mixed owners" >&2; exit 123; }
    wuid=$owner wgid=$group
  elif [ -z "$uid" ] && [ "$owner" != 0 ]; then
    uid=$owner gid=$group
  fi
done
[ -z "$wuid" ] || uid=$wuid gid=$wgid
if [ -z "$uid" ]; then
  uid=${NOBODY} gid=${NOBODY}
else
  own=$(getent passwd "$uid" | cut -d: -f4)
  [ -z "$own" ] || gid=$own
  [ "$gid" != 0 ] || gid=${NOBODY}
fi
# nobody gains no one anything: what is at the path is only read or written with others' rights.
k=0 left=$owners
[ "$uid" != ${NOBODY} ] && for arg in "$@"; do
  k=$((k + 1))
  [ "$k" -eq 1 ] && continue
  [ "$k" -gt $((2 * n + 1)) ] && break
  [ $((k % 2)) -eq 0 ] && continue
  bad=
  parents "$uid" "\${left%% *}" "$arg" ||
    { printf 'gurt-sandbox: open parent\n%s\n' "$bad" >&2; exit 122; }
  left=\${left#* }
done
if [ -n "$root" ]; then
  group="$root/$name"
  { [ -d "$group" ] || mkdir -p "$group"; } && echo "$max" > "$group/pids.max" &&
    echo $$ > "$group/cgroup.procs" ||
    { echo "gurt-sandbox: cannot join the pids cgroup $group" >&2; exit 125; }
fi
if [ -n "$mroot" ]; then
  group="$mroot/$name"
  { [ -d "$group" ] || mkdir -p "$group"; } && echo "$mlimit" > "$group/memory.limit_in_bytes" &&
    echo $$ > "$group/cgroup.procs" ||
    { echo "gurt-sandbox: cannot join the memory cgroup $group" >&2; exit 125; }
fi
ulimit -c 0 && ulimit -v "$kib" ||
  { echo "gurt-sandbox: cannot set the memory limit" >&2; exit 125; }
exec 9<"$filter" || { echo "gurt-sandbox: cannot open the seccomp filter" >&2; exit 125; }
exec "$setpriv" --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs \
  --inh-caps=-all --bounding-set=-all -- /bin/sh -c "$STAGE_USER" gurt-sandbox "$uid" "$ids" "$@"`;

/**
 * The second stage, as the call's uid: $1 the uid, $2 the device:inode the first stage saw at each
 * mount's path, $3 how many mounts, their modes and paths, then bubblewrap and its arguments. Each
 * path is opened on fd 3, 4, … (bubblewrap binds those descriptors), and the object opened must be
 * at that very path and be the object the first stage looked at: a path that leads elsewhere
 * through a link (one a task put in a folder it may write, say), or whose object was swapped since
 * (the uid was picked from what the first stage saw), is refused with \`gurt-sandbox: linked path\`
 * and exit 124. A writable mount must still belong to the uid. The checks and the mount are of the
 * same opened object, so swapping the path back and forth between them gains nothing.
 */
const STAGE_USER = `uid=$1 ids=$2 n=$3
shift 3
fd=3
while [ "$n" -gt 0 ]; do
  mode=$1 path=$2 id=\${ids%% *} ids=\${ids#* }
  shift 2
  eval "command exec $fd<\\"\\$path\\"" 2>/dev/null ||
    { echo "gurt-sandbox: cannot open a granted path" >&2; exit 125; }
  # The x keeps a trailing newline of the path, which $(...) would drop.
  [ "$(readlink "/proc/$$/fd/$fd"; echo x)" = "$path
x" ] || { echo "gurt-sandbox: linked path" >&2; exit 124; }
  st=$(stat -L -c '%u %d:%i' "/proc/$$/fd/$fd")
  [ "\${st#* }" = "$id" ] || { echo "gurt-sandbox: linked path" >&2; exit 124; }
  [ "$mode" = r ] || [ "\${st%% *}" = "$uid" ] ||
    { echo "gurt-sandbox: linked path" >&2; exit 124; }
  fd=$((fd + 1))
  n=$((n - 1))
done
exec "$@"`;

/** Both stages: the first hands the second its text in STAGE_USER. */
const WRAPPER = `STAGE_USER='${STAGE_USER.replaceAll("'", "'\\''")}'
${STAGE_ROOT}`;

const MAX_STDERR = 4096;

/** The argv that runs bubblewrap inside the wrapper, with a cgroup plan or none. */
export function wrappedArgv(
  bwrapArgs: readonly string[],
  options: {
    bwrap: string;
    cgroup: CgroupPlan | null;
    memoryBytes: number;
    /** The seccomp filter's file, which the wrapper opens as root on bubblewrap's `--seccomp` fd. */
    filter: string;
    /** The mounts, in the order of bwrapArgs' --bind-fd and --ro-bind-fd. */
    mounts: readonly Mount[];
  },
): string[] {
  const cgroup = options.cgroup;
  return [
    "/bin/bash",
    "-c",
    WRAPPER,
    "gurt-sandbox",
    cgroup?.root ?? "",
    cgroup?.name ?? "",
    String(cgroup?.maxProcesses ?? 0),
    cgroup?.memoryRoot ?? "",
    String(callMemoryLimit(options.memoryBytes)),
    String(Math.floor(options.memoryBytes / 1024)),
    options.filter,
    SETPRIV,
    String(options.mounts.length),
    ...options.mounts.flatMap((mount) => [mount.writable ? "w" : "r", mount.path]),
    options.bwrap,
    ...bwrapArgs,
  ];
}

/** Runs bubblewrap with `bwrapArgs` under the limits and returns how it ended. */
export async function runSandbox(
  bwrapArgs: readonly string[],
  options: {
    bwrap: string;
    stdin: string | null;
    limits: SandboxLimits;
    cgroup: CgroupPlan | null;
    filter: string;
    mounts: readonly Mount[];
  },
): Promise<SandboxEnd> {
  const argv = wrappedArgv(bwrapArgs, {
    bwrap: options.bwrap,
    mounts: options.mounts,
    cgroup: options.cgroup,
    filter: options.filter,
    memoryBytes: options.limits.memoryBytes,
  });
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    stdin: options.stdin === null ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    // Not detached: a detached spawn costs ~25 ms more here, and bubblewrap's pid namespace with
    // --die-with-parent already reaches every process of the call.
    clearEnv: true,
    env: { PATH: "/usr/local/bin:/usr/bin:/bin" },
  }).spawn();
  let killed = false;
  let exited = false;
  const status = child.status.then((value) => {
    exited = true;
    return value;
  });
  const kill = (): void => {
    // Never after the exit: the pid may already belong to another process.
    if (killed || exited) return;
    killed = true;
    try {
      // bubblewrap's own process: its death takes the sandbox's pid 1, and with it the namespace.
      Deno.kill(child.pid, "SIGKILL");
    } catch {
      // It has already gone.
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, options.limits.timeoutMs);
  // Once bubblewrap has gone, every process of the call has too, and the pipes close at once. If
  // one is still open after a moment, something of the call outlived it: the pipes are let go, so
  // the call returns all the same, and the call's cgroup is emptied.
  const stop = new AbortController();
  let lingering: ReturnType<typeof setTimeout> | undefined;
  status.then(() => {
    lingering = setTimeout(() => stop.abort(), AFTER_EXIT_MS);
  });
  try {
    const writing = options.stdin === null
      ? Promise.resolve()
      : writeAll(child, options.stdin, stop.signal);
    const [output, stderr, ended] = await Promise.all([
      readCapped(child.stdout, options.limits.maxOutputBytes, kill, stop.signal),
      readCapped(child.stderr, MAX_STDERR, () => {}, stop.signal),
      status,
      writing,
    ]);
    if ((killed || stop.signal.aborted) && options.cgroup !== null) {
      await killGroup(options.cgroup);
    }
    if (timedOut) return { kind: "timed_out" };
    const code = ended.signal === null ? ended.code : 128 + signalNumber(ended.signal);
    return {
      kind: "exited",
      status: code,
      output: output.bytes,
      truncated: output.truncated,
      stderr: new TextDecoder().decode(stderr.bytes),
    };
  } finally {
    clearTimeout(timer);
    if (!exited) {
      kill();
      await status;
    }
    clearTimeout(lingering);
  }
}

/** How long the pipes may stay open once bubblewrap has gone. */
const AFTER_EXIT_MS = 250;

async function writeAll(child: Deno.ChildProcess, text: string, stop: AbortSignal): Promise<void> {
  const writer = child.stdin.getWriter();
  const abort = () => writer.abort().catch(() => {});
  stop.addEventListener("abort", abort, { once: true });
  try {
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
  } catch {
    // The sandbox stopped reading (it failed or was killed); its exit says what happened.
  } finally {
    stop.removeEventListener("abort", abort);
  }
}

/**
 * Reads a stream to its end, or until `stop`, keeping at most `max` bytes; calls `over` once when
 * it passes it.
 */
async function readCapped(
  stream: ReadableStream<Uint8Array>,
  max: number,
  over: () => void,
  stop: AbortSignal,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let truncated = false;
  const reader = stream.getReader();
  const cancel = () => reader.cancel().catch(() => {});
  stop.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      const chunk = next.value;
      const room = max - kept;
      if (chunk.length <= room) {
        chunks.push(chunk);
        kept += chunk.length;
        continue;
      }
      if (room > 0) {
        chunks.push(chunk.subarray(0, room));
        kept += room;
      }
      if (!truncated) {
        truncated = true;
        over();
      }
    }
  } catch {
    // Cancelled: what was read is kept.
  } finally {
    stop.removeEventListener("abort", cancel);
  }
  const bytes = new Uint8Array(kept);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return { bytes, truncated };
}

function signalNumber(signal: Deno.Signal): number {
  const numbers: Partial<Record<Deno.Signal, number>> = {
    SIGHUP: 1,
    SIGINT: 2,
    SIGQUIT: 3,
    SIGILL: 4,
    SIGTRAP: 5,
    SIGABRT: 6,
    SIGBUS: 7,
    SIGFPE: 8,
    SIGKILL: 9,
    SIGUSR1: 10,
    SIGSEGV: 11,
    SIGUSR2: 12,
    SIGPIPE: 13,
    SIGALRM: 14,
    SIGTERM: 15,
  };
  return numbers[signal] ?? 0;
}

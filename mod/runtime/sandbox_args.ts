/**
 * The bubblewrap argument list for one RunSpec
 * (docs/threat-model.md#the-sandbox-of-read_file-write_file-and-shell), as pure data: new user,
 * pid, ipc, uts and network namespaces; no capability, and the seccomp filter that keeps setuid and
 * setgid bits off what a tool writes; the system directories read-only; a private /tmp and /dev, of
 * bounded size; exactly the spec's mounts at the same paths, from the descriptors the wrapper
 * opened them on; no environment but a fixed one; dies with the core. The golden tests in
 * tests/runtime/sandbox_args_test.ts pin every list.
 */
import type { Mount, RunSpec } from "./run_spec.ts";

/** One top-level system path of the host: a directory or file mounted read-only, or a symlink copied. */
export type SystemEntry =
  | { path: string; kind: "bind" }
  | { path: string; kind: "symlink"; target: string };

/** What the host's system directories look like, probed once at start (system_layout.ts). */
export interface SystemLayout {
  readonly entries: readonly SystemEntry[];
}

/** The sandbox's fixed environment: nothing of the core's (no vault value can leak through it). */
export const SANDBOX_ENV: Readonly<Record<string, string>> = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: "/tmp",
  LANG: "C.UTF-8",
};

/** The program and arguments a built-in tool runs inside the sandbox. */
export interface SandboxCommand {
  /** The argv after bubblewrap's own options. */
  argv: string[];
  /** The working directory inside the sandbox. */
  cwd: string;
  /** What goes to the command's stdin (write_file's content), or null for nothing. */
  stdin: string | null;
  /**
   * Where bubblewrap puts stdin's bytes instead, as a read-only file inside the sandbox (the shell
   * tool's command: in argv, any user of the host would read it in /proc/PID/cmdline), or absent
   * for a stdin that is the command's own.
   */
  stdinAt?: string;
}

/**
 * Where a shell call's command lies inside its sandbox: at the root bubblewrap makes, which no
 * grant's path can shadow (a grant on / would hold the box home, which is never mounted).
 */
export const COMMAND_FILE = "/.gurt/command";

/** The command for a built-in tool run in the sandbox; throws for http_fetch and app tools. */
export function sandboxCommand(spec: RunSpec): SandboxCommand {
  const args = spec.args;
  switch (args.kind) {
    case "read_file":
      return { argv: ["/bin/cat", "--", args.path], cwd: "/tmp", stdin: null };
    case "write_file":
      return {
        argv: ["/bin/sh", "-c", 'exec /bin/cat > "$1"', "gurt-write", args.path],
        cwd: "/tmp",
        stdin: args.content,
      };
    case "shell":
      // The command reaches the sandbox on stdin, which bubblewrap turns into COMMAND_FILE, never
      // in an argv. The shell reads it from there once its stdin is /dev/null (bubblewrap closed
      // the pipe) and its stderr joins its stdout, so bubblewrap's own stderr stays its own; both
      // redirections run before the command is even parsed.
      return {
        argv: ["/bin/sh", "-c", `exec </dev/null 2>&1; . ${COMMAND_FILE}`],
        cwd: args.cwd ?? "/tmp",
        stdin: `${args.command}\n`,
        stdinAt: COMMAND_FILE,
      };
    default:
      throw new Error(`the tool ${spec.tool} does not run in the sandbox`);
  }
}

/** bubblewrap's arguments for a spec: the namespaces, the system, the mounts, then the command. */
export function bwrapArgs(
  spec: RunSpec,
  options: { layout: SystemLayout; tmpBytes: number },
): string[] {
  return sandboxArgs(sandboxCommand(spec), { ...options, mounts: spec.mounts });
}

/**
 * The file descriptor the wrapper opens the `i`th mount's path on (sandbox_process.ts), which
 * bubblewrap binds: the object the wrapper found at that very path, not whatever a link put there
 * by the time bubblewrap would look the path up again.
 */
export const FIRST_MOUNT_FD = 3;
/** The fd of the seccomp filter (seccomp_filter.ts), opened by the wrapper, loaded by bubblewrap. */
export const SECCOMP_FD = 9;
/** The most mounts a call may have: fds 3 to 8 (a shell keeps 3 to 9 open across exec; 9 is the filter's). */
export const MAX_MOUNTS = 6;

/**
 * bubblewrap's arguments for the system a sandbox sees: the host's system paths read-only (a path
 * in `replace` bound from the file it names instead, such as a task's own /etc/passwd), /proc, and a
 * /dev, /dev/shm and /tmp of bounded size. /dev is a tmpfs of half the host's memory: its /dev/shm
 * gets the size /tmp gets, and /dev itself is made read-only, so nothing in the sandbox holds more
 * memory in files than the two sizes. Shared by a tool call's sandbox and a task's.
 */
export function systemArgs(
  layout: SystemLayout,
  options: { tmpBytes: number; replace?: ReadonlyMap<string, string> },
): string[] {
  const args: string[] = [];
  for (const entry of layout.entries) {
    if (entry.kind === "bind") {
      args.push("--ro-bind", options.replace?.get(entry.path) ?? entry.path, entry.path);
    } else args.push("--symlink", entry.target, entry.path);
  }
  const size = String(options.tmpBytes);
  args.push("--proc", "/proc", "--dev", "/dev", "--size", size, "--tmpfs", "/dev/shm");
  args.push("--remount-ro", "/dev", "--size", size, "--tmpfs", "/tmp");
  return args;
}

/** bubblewrap's arguments for a command and its mounts (the start check runs `/bin/true` so). */
export function sandboxArgs(
  command: SandboxCommand,
  options: { mounts: readonly Mount[]; layout: SystemLayout; tmpBytes: number },
): string[] {
  const { mounts } = options;
  const args = [
    "--unshare-user",
    "--unshare-pid",
    // The command is the namespace's pid 1, a child bubblewrap waits for. Without it, bubblewrap's
    // own pid 1 outlives bubblewrap for a moment and is left a zombie for the box's init to reap,
    // still counted in the call's pids cgroup.
    "--as-pid-1",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--seccomp",
    String(SECCOMP_FD),
    "--hostname",
    "gurt-sandbox",
    "--clearenv",
  ];
  for (const [name, value] of Object.entries(SANDBOX_ENV)) args.push("--setenv", name, value);
  args.push(...systemArgs(options.layout, { tmpBytes: options.tmpBytes }));
  if (command.stdinAt !== undefined) args.push("--ro-bind-data", "0", command.stdinAt);
  if (mounts.length > MAX_MOUNTS) throw new Error(`a call has at most ${MAX_MOUNTS} mounts`);
  mounts.forEach((mount, i) => {
    args.push(
      mount.writable ? "--bind-fd" : "--ro-bind-fd",
      String(FIRST_MOUNT_FD + i),
      mount.path,
    );
  });
  // The root bubblewrap builds is a tmpfs of half the host's memory: read-only once built, so no
  // call keeps files in it (/tmp and /dev/shm are the sized places to write).
  args.push("--remount-ro", "/", "--chdir", command.cwd, "--", ...command.argv);
  return args;
}

/**
 * The bubblewrap argument list of a task's sandbox, as pure data. A worker runs in new user, pid,
 * ipc, uts, cgroup and network namespaces: only `lo` exists, no capability, no new user namespace,
 * the seccomp filter the built-in tools get (no setuid or setgid bit on anything it writes). It
 * sees the system directories, gurt's own program and the CA certificates read-only (and, where the
 * task is given the box CA, its bundle at CA_BUNDLE_PATH); its home
 * (tasks/<id>/home) is the one folder it may write, with a private /tmp and /dev/shm of bounded
 * size; the core's sockets (its doors) are bound in at DOORS_DIR. Nothing else of the host is
 * visible: not the rest of /etc, the box home, other tasks, /home, /root, /srv, /opt.
 *
 * The task init (task_init.c) comes in on stdin, as a read-only file at INIT_PATH, and is the
 * namespace's pid 1: it opens each door (a loopback port, or BOX_SOCKET's path), then runs the
 * worker. tests/sandbox/task_sandbox_test.ts runs the list for real, as root.
 */
import { systemArgs, type SystemLayout } from "../runtime/mod.ts";

/** Where the task init lies inside the sandbox, at the root bubblewrap builds. */
export const INIT_PATH = "/.gurt/init";

/** The fd of the seccomp filter, opened by the sandbox's first stage and loaded by bubblewrap. */
export const TASK_SECCOMP_FD = 9;

/**
 * Where the box CA bundle (the box CA, then the system roots) lies inside a task's sandbox: a
 * read-only copy bubblewrap makes from TASK_CA_FD, which the first stage opens as root.
 */
export const CA_BUNDLE_PATH = "/.gurt/ca.pem";

/**
 * The fd of the box CA bundle, opened by the sandbox's first stage (task_limits.ts's STAGE_ONE) when
 * the task is given one.
 */
export const TASK_CA_FD = 8;

/**
 * The fd of the task init, where the first stage opens it from a file (a sandbox whose stdin is its
 * program's, such as an app's MCP server); else the init comes on stdin (fd 0).
 */
export const TASK_INIT_FD = 7;

/** The egress proxy's port on the task's loopback. */
export const EGRESS_PORT = 3128;

/** The model endpoint's port on the task's loopback. */
export const MODEL_PORT = 4100;

/** The key a task's model clients send: the endpoint puts the vault's in its place. */
export const PLACEHOLDER_KEY = "gurt-placeholder-key";

/** A worker's model variables: every SDK and CLI in the task uses its model endpoint. */
export function modelEnv(port: number = MODEL_PORT): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    ANTHROPIC_API_KEY: PLACEHOLDER_KEY,
    OPENAI_API_KEY: PLACEHOLDER_KEY,
  };
}

/**
 * A worker's CA variables: each names CA_BUNDLE_PATH, for Node (added to its roots), OpenSSL and
 * Python's ssl, requests, curl, Deno and git. Most of them replace the roots rather than add to
 * them, which is why the bundle carries the system roots after the box CA.
 */
export function caEnv(): Record<string, string> {
  return {
    NODE_EXTRA_CA_CERTS: CA_BUNDLE_PATH,
    SSL_CERT_FILE: CA_BUNDLE_PATH,
    REQUESTS_CA_BUNDLE: CA_BUNDLE_PATH,
    CURL_CA_BUNDLE: CA_BUNDLE_PATH,
    DENO_CERT: CA_BUNDLE_PATH,
    GIT_SSL_CAINFO: CA_BUNDLE_PATH,
  };
}

/**
 * A door of the core inside the sandbox: the core's Unix socket `socket`, which the task init opens
 * on a port of the task's loopback (`port`), or as a Unix socket of its own at `path` (the broker's,
 * at the path BOX_SOCKET names). The core's socket itself is bound at DOORS_DIR, where only the init
 * uses it; each connection through the init counts toward its cap of 64 at once per door.
 */
export type Door = { port: number; socket: string } | { path: string; socket: string };

/** Where the core's sockets are bound inside the sandbox, for the task init to relay to. */
export const DOORS_DIR = "/.gurt/doors";

/** The largest tmpfs made for a Unix door's folder: it holds the init's socket, and a task's litter. */
const DOOR_DIR_BYTES = 1024 * 1024;

/** Everything the sandbox of one task is made of. */
export interface TaskSandboxPlan {
  /** The task's id, in the sandbox's host name. */
  task: string;
  /** tasks/<id>/home: the one writable folder, and the working directory. */
  home: string;
  /** The core's sockets, opened inside by the task init. */
  doors: readonly Door[];
  /**
   * The task's own /etc/passwd and /etc/group (root, nobody and its user only), bound in place of
   * the host's, which name every other task's user; null to bind the host's.
   */
  identity: { passwd: string; group: string } | null;
  /** Files and folders bound in read-only at their own paths (mcp.json, a test worker's script). */
  readOnly: readonly string[];
  /** The host's system layout (runtime's probeSystemLayout) and the extra /etc entries it has. */
  layout: SystemLayout;
  /** Folders of gurt's own program (its code, the Deno binary's folder) bound read-only. */
  program: readonly string[];
  /** The size of /tmp, and of /dev/shm. */
  tmpBytes: number;
  /** The worker's argv. */
  argv: readonly string[];
  /** Whether the first stage opened the box CA bundle on TASK_CA_FD, to copy to CA_BUNDLE_PATH. */
  caBundle: boolean;
  /** Whether the first stage opened the task init on TASK_INIT_FD (else it is on stdin). */
  initOnFd?: boolean;
  /** The sandbox's host name; `gurt-task-<task>` when absent. */
  hostname?: string;
  /**
   * Binds after the home's, in order: the owner's workdirs (mod/workdir), each from its id-mapped
   * staging mount at its own path, writable or not, then read-only what covers its protected paths.
   */
  binds?: readonly { source: string; dest: string; writable: boolean }[];
  /** The working directory when it is not the home (a task's first workdir). */
  cwd?: string;
}

/** bubblewrap's arguments for a task's sandbox, the worker's command last. */
export function taskSandboxArgs(plan: TaskSandboxPlan): string[] {
  const args = [
    "--unshare-user",
    "--unshare-pid",
    "--as-pid-1",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-net",
    "--unshare-cgroup-try",
    "--disable-userns",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--seccomp",
    String(TASK_SECCOMP_FD),
    "--hostname",
    plan.hostname ?? `gurt-task-${plan.task}`,
  ];
  const replace = plan.identity === null
    ? undefined
    : new Map([["/etc/passwd", plan.identity.passwd], ["/etc/group", plan.identity.group]]);
  args.push(...systemArgs(plan.layout, { tmpBytes: plan.tmpBytes, replace }));
  // After /tmp's tmpfs, which would hide what is bound under /tmp before it.
  for (const path of plan.program) args.push("--ro-bind", path, path);
  // A Unix door's folder is a small tmpfs the init makes its socket in, before what is bound in it.
  for (const door of plan.doors) {
    if ("path" in door) args.push("--size", String(DOOR_DIR_BYTES), "--tmpfs", dirname(door.path));
  }
  // A read-only folder that holds the home (an app's folder) goes first, so the home's own bind
  // stays writable inside it; every other read-only path goes after, over whatever is beneath.
  const holdsHome = (path: string) => plan.home.startsWith(path.endsWith("/") ? path : `${path}/`);
  for (const path of plan.readOnly.filter(holdsHome)) args.push("--ro-bind", path, path);
  args.push("--bind", plan.home, plan.home);
  plan.doors.forEach((door, i) => args.push("--bind", door.socket, `${DOORS_DIR}/${i}.sock`));
  for (const bind of plan.binds ?? []) {
    args.push(bind.writable ? "--bind" : "--ro-bind", bind.source, bind.dest);
  }
  for (const path of plan.readOnly.filter((path) => !holdsHome(path))) {
    args.push("--ro-bind", path, path);
  }
  const initFd = plan.initOnFd === true ? TASK_INIT_FD : 0;
  args.push("--perms", "0555", "--ro-bind-data", String(initFd), INIT_PATH);
  // bubblewrap copies the bundle into the sandbox's root and closes the descriptor it read.
  if (plan.caBundle) {
    args.push("--perms", "0444", "--ro-bind-data", String(TASK_CA_FD), CA_BUNDLE_PATH);
  }
  args.push("--remount-ro", "/", "--chdir", plan.cwd ?? plan.home, "--", INIT_PATH);
  plan.doors.forEach((door, i) => {
    args.push("path" in door ? door.path : String(door.port), `${DOORS_DIR}/${i}.sock`);
  });
  args.push("--", ...plan.argv);
  return args;
}

function dirname(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

/** The proxy variables of a worker's environment: every common client uses the egress proxy. */
export function proxyEnv(port: number = EGRESS_PORT): Record<string, string> {
  const http = `http://127.0.0.1:${port}`;
  const noProxy = "localhost,127.0.0.1,::1";
  return {
    HTTPS_PROXY: http,
    HTTP_PROXY: http,
    ALL_PROXY: `socks5h://127.0.0.1:${port}`,
    NO_PROXY: noProxy,
    https_proxy: http,
    http_proxy: http,
    all_proxy: `socks5h://127.0.0.1:${port}`,
    no_proxy: noProxy,
    NODE_USE_ENV_PROXY: "1",
  };
}

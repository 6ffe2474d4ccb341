/**
 * The one table of gurt's roles. For each command that starts a role: the role, the Deno
 * permissions it runs with (computed from the places it is given at start: the box home, a task's
 * socket, the guest's workspace) and the module its Worker runs. A role's permissions are written
 * here and nowhere else, so reading this file tells a reviewer everything each role can touch.
 * README.md's roles table is checked against it (tests/roles/readme_table_test.ts).
 *
 * Each entry is named by URL and loaded by the role's Worker; this file loads none of them.
 */
import type { Config } from "../config/mod.ts";
// The light entries of config, runtime, sandbox and cua (tests/policy/boundary_test.ts lists
// them): their mod.ts would load zod and TOML, the sandbox and the X client into every `gurt`
// command, `gurt mcp` included, which must answer its agent within 150 ms.
import { codeDir } from "../config/code_dir.ts";
import { adminSocketPath, ownerTokenPath, portalAddrPath } from "../config/home_paths.ts";
import {
  host,
  portalPermissions,
  type PortalPlaces,
  standInPermissions,
  type StandInPlaces,
} from "./loopback_roles.ts";
import { egressClientPermissions, type LaptopPlaces } from "./laptop_role.ts";
import { SYSTEM_PATHS } from "../runtime/system_layout.ts";
import { TASK_ETC_PATHS } from "../sandbox/etc_paths.ts";
import { type DesktopOptions, socketOf } from "../cua/options.ts";
import type { RoleName, RolePermissions } from "./types.ts";

/** One command's role: who it runs as, with what, and which module. */
export interface RoleStart<P> {
  role: RoleName;
  /** The role's permissions for the places it is given. */
  permissions: (places: P) => RolePermissions;
  /** The module the role's Worker runs; its default export is a RoleMain. */
  entry: URL;
  /**
   * The role stops itself on SIGTERM and SIGINT (its Worker listens for them); the launcher keeps
   * the process from ending on the signal before the Worker's listener has run.
   */
  stopsOnSignal: boolean;
  /** The subcommands that start it, as the owner types them (`approvals`, `approve`, …). */
  commands: string[];
}

/** What the core's permissions are computed from. */
export interface CorePlaces {
  config: Config;
}

/** What a task's worker's or relay's permissions are computed from. */
export interface TaskPlaces {
  /** The task's broker socket (BOX_SOCKET). */
  socket: string;
  /**
   * The loop's model endpoint inside its task, `host:port` (from ANTHROPIC_BASE_URL and
   * OPENAI_BASE_URL: the task's loopback, where the core's endpoint holds the key).
   */
  modelEndpoints?: string[];
  /** Files it is given to read, such as the test worker's script. */
  files?: string[];
}

/** What `gurt agent-run`'s permissions are computed from. */
export interface AgentPlaces {
  /** The task's broker socket (BOX_SOCKET). */
  socket: string;
  /** The task's home (HOME), where the agent's settings are written and where it runs. */
  home: string;
  /** The folder install.sh installed the agent's npm package into. */
  agentDir: string;
  /** The agent's binary in that folder: the one program the role runs. */
  binary: string;
}

/** What an owner command's permissions are computed from. */
export interface OwnerPlaces {
  config: Config;
  /** Files outside the box home the command reads, such as `audit verify --checkpoint FILE`. */
  files?: string[];
}

/** What a module app's host's permissions are computed from (mod/cli/app_host_start.ts). */
export interface AppHostPlaces {
  /** The app's module, by its absolute path: its folder is read. */
  module: string;
  /** The app's home (GURT_APP_HOME, else HOME), its one writable place; null for none. */
  home: string | null;
  /** The app's hosts (GURT_APP_HOSTS) as Deno spells them, `host:port`; empty for none. */
  hosts: string[];
  /** The proxies its environment names (HTTPS_PROXY, ALL_PROXY, …), `host:port`. */
  proxies: string[];
}

/** What the guest's permissions are computed from. */
export interface GuestPlaces {
  workspace: string;
  bind: string;
  ports: number[];
  /** BOX_TOKEN_FILE and BOX_HOST_TOKEN_FILE, where set. */
  tokenFiles: string[];
  /** With `--desktop`, its options; else null. */
  desktop: DesktopOptions | null;
}

/**
 * The core (`gurt serve`): it owns the box home and the vault. It starts workers and the sandbox,
 * so it may run programs, and it fetches for http_fetch, so it may reach the network. It may not
 * load native code.
 */
function corePermissions(places: CorePlaces): RolePermissions {
  const { config } = places;
  const vaultDir = config.vault.slice(0, config.vault.lastIndexOf("/")) || "/";
  return {
    // The runtime looks at the system paths it mounts into the sandbox.
    read: [
      codeDir(),
      config.home,
      vaultDir,
      "/etc/passwd",
      "/etc/group",
      "/proc",
      ...SYSTEM_PATHS,
      // A task's sandbox shows these too, and gurt's own program (Deno's binary) read-only.
      ...TASK_ETC_PATHS,
      Deno.execPath(),
    ],
    // The vault is rewritten as vault.env.tmp and renamed, so its directory is writable.
    write: [config.home, vaultDir],
    net: true,
    env: true,
    run: true,
    // "ca": node:https reads the system's CA store for http_fetch; "networkInterfaces": http_fetch
    // refuses the box's own addresses, read at each fetch.
    sys: ["uid", "gid", "hostname", "osRelease", "systemMemoryInfo", "ca", "networkInterfaces"],
    ffi: false,
    import: false,
  };
}

/**
 * A task's worker (`gurt loop` and `gurt test-worker`): one task's conversation with a model. It
 * reaches the box over its task socket and the model through its task's model endpoint, which
 * holds the key. It reads no vault, no grants and no audit log, and reaches no other host.
 */
function workerPermissions(places: TaskPlaces): RolePermissions {
  const { socket } = places;
  return {
    read: [codeDir(), socket, ...(places.files ?? [])],
    write: [socket],
    net: [`unix:${socket}`, ...(places.modelEndpoints ?? [])],
    env: ["BOX_SOCKET", "BOX_TASK", "NO_COLOR"],
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}

/**
 * A coding agent as a task's worker (`gurt agent-run`): it reads its task over the socket, writes
 * the agent's settings into the task's home and runs the agent's binary there, the one program it
 * may start (what that program does is bounded by the task's sandbox, not by Deno). It reads no
 * vault, grants or audit log, reaches no host (the agent reaches the model endpoint and the egress
 * proxy itself), and reads no environment: the launcher passes what it needs, and the agent
 * inherits the task's environment.
 */
function agentRunPermissions(places: AgentPlaces): RolePermissions {
  const { socket } = places;
  return {
    read: [codeDir(), socket, places.home, places.agentDir],
    write: [socket, places.home],
    net: [`unix:${socket}`],
    env: false,
    run: [places.binary],
    sys: false,
    ffi: false,
    import: false,
  };
}

/** The MCP relay (`gurt mcp`): it forwards MCP calls from stdio to its task socket, and no more. */
function relayPermissions(places: Pick<TaskPlaces, "socket">): RolePermissions {
  const { socket } = places;
  return {
    read: [codeDir(), socket],
    write: [socket],
    net: [`unix:${socket}`],
    env: ["BOX_SOCKET", "BOX_TASK"],
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}

/**
 * A module app's host (`gurt app-host MODULE`, started by the core in the app's sandbox): it reads
 * its code and the app's folder, writes only the app's home, and reaches only the app's hosts and
 * the proxy that is its way to them; an app without hosts reaches nothing. It reads the whole
 * environment, which is the one the core built for the app's sandbox (libraries read variables of
 * their own), after taking the app's vault keys out of it at start. It runs no program.
 */
function appHostPermissions(places: AppHostPlaces): RolePermissions {
  const folder = places.module.slice(0, places.module.lastIndexOf("/")) || "/";
  const home = places.home === null ? [] : [places.home];
  return {
    read: [codeDir(), folder, ...home],
    write: home.length === 0 ? false : home,
    net: places.hosts.length === 0 ? false : [...places.hosts, ...places.proxies],
    env: true,
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}

/**
 * The owner CLI: it reads the audit log, the grants, the credential rules and gurt.toml, and talks
 * to the admin socket.
 * It writes nothing.
 */
function cliPermissions(places: OwnerPlaces): RolePermissions {
  const { config } = places;
  const admin = adminSocketPath(config.home);
  return {
    read: [
      codeDir(),
      config.file,
      `${config.home}/audit`,
      `${config.home}/grants`,
      // The credential rules, which `gurt grants check` checks: hosts and vault key names, no value.
      `${config.home}/credentials`,
      // The core's open approvals, which `gurt audit verify` shows as waiting, not abandoned.
      `${config.home}/run/approvals-open.json`,
      admin,
      ...(places.files ?? []),
    ],
    // Connecting to a Unix socket is a write to its path in Deno; the socket is the only one.
    write: [admin],
    net: [`unix:${admin}`],
    env: ["NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "TERM", "COLUMNS"],
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}

/**
 * `gurt portal`, an owner command in the CLI role: it reads the owner token and the portal's
 * address file, and prints a link. It writes nothing and reaches no network.
 */
function portalLinkPermissions(places: OwnerPlaces): RolePermissions {
  const { config } = places;
  return {
    read: [codeDir(), ownerTokenPath(config.home), portalAddrPath(config.home)],
    write: false,
    net: false,
    env: ["NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "TERM", "COLUMNS"],
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}

/**
 * The guest (`gurt guest`, its exec and host services, docs/guest-api.md): the workspace jail, its
 * token files, the X display, and its two ports. It may not read the box home. It runs programs for
 * /v1/exec, so `run` is whole: the sandbox around the guest is what bounds them. With `--desktop`
 * it holds what desktopPermissionNeeds adds.
 */
function guestPermissions(places: GuestPlaces): RolePermissions {
  const base: RolePermissions = {
    read: [codeDir(), places.workspace, ...places.tokenFiles, "/proc", "/tmp/.X11-unix"],
    write: [places.workspace, "/tmp/.X11-unix"],
    // Its own ports, and loopback so the host service can ask the exec service for /v1/health.
    net: [
      ...places.ports.map((port) => `${host(places.bind)}:${port}`),
      "127.0.0.1",
      "[::1]",
      "localhost",
    ],
    env: true,
    run: true,
    sys: ["hostname", "homedir", "osUptime", "loadavg", "systemMemoryInfo"],
    ffi: false,
    import: false,
  };
  if (places.desktop === null) return base;
  const needs = desktopPermissionNeeds(places.desktop);
  const list = (value: string[] | boolean): string[] => Array.isArray(value) ? value : [];
  return {
    ...base,
    read: [...list(base.read), ...needs.read],
    write: [...list(base.write), ...needs.write],
    net: base.net === true ? true : [...list(base.net), ...needs.net],
    sys: base.sys === true
      ? true
      : [...new Set([...list(base.sys), ...needs.sys])] as RolePermissions["sys"],
    run: needs.run,
  };
}

/**
 * What the desktop (`gurt guest --desktop`) adds to the guest's permissions: the X socket (the
 * x11 package connects over it, which Deno counts as net), the workspace for artifacts and the
 * Chromium profile's folder, and unscoped `run` for its programs.
 */
export function desktopPermissionNeeds(options: DesktopOptions): {
  read: string[];
  write: string[];
  net: string[];
  sys: ("hostname" | "homedir")[];
  run: true;
} {
  const profile = options.chromeProfile === null ? [] : [options.chromeProfile];
  return {
    read: [options.workspace, "/tmp/.X11-unix", ...profile],
    write: [options.workspace, socketOf(options.display), ...profile],
    net: [`unix:${socketOf(options.display)}`, "127.0.0.1", options.viewerHost],
    // The x11 package reads the host name and home for X authority, and hangs without them.
    sys: ["hostname", "homedir"],
    // Xvfb, setxkbmap, openbox, chromium, x11vnc, websockify, ffmpeg; and stopping a program's
    // whole process group (Deno.kill of -pid) needs run unscoped.
    run: true,
  };
}

/** Every command that starts a role, by the name its command file launches it with. */
export interface RoleTable {
  serve: RoleStart<CorePlaces>;
  loop: RoleStart<TaskPlaces>;
  "test-worker": RoleStart<TaskPlaces>;
  "agent-run": RoleStart<AgentPlaces>;
  mcp: RoleStart<Pick<TaskPlaces, "socket">>;
  "app-host": RoleStart<AppHostPlaces>;
  guest: RoleStart<GuestPlaces>;
  approvals: RoleStart<OwnerPlaces>;
  task: RoleStart<OwnerPlaces>;
  tools: RoleStart<OwnerPlaces>;
  "task watch": RoleStart<OwnerPlaces>;
  vault: RoleStart<OwnerPlaces>;
  app: RoleStart<OwnerPlaces>;
  grants: RoleStart<OwnerPlaces>;
  audit: RoleStart<OwnerPlaces>;
  config: RoleStart<OwnerPlaces>;
  portal: RoleStart<OwnerPlaces>;
  "portal-serve": RoleStart<PortalPlaces>;
  "model-stand-in": RoleStart<StandInPlaces>;
  "egress-tunnel": RoleStart<LaptopPlaces>;
}

/** The roles: each command's role, permissions and entry module. */
export const ROLE_TABLE: RoleTable = {
  serve: {
    role: "core",
    permissions: corePermissions,
    entry: new URL("../core/serve_main.ts", import.meta.url),
    stopsOnSignal: true,
    commands: ["serve"],
  },
  loop: {
    role: "worker",
    permissions: workerPermissions,
    entry: new URL("../loop/loop_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["loop"],
  },
  "test-worker": {
    role: "worker",
    permissions: workerPermissions,
    entry: new URL("../workers/test_worker.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["test-worker"],
  },
  "agent-run": {
    role: "worker",
    permissions: agentRunPermissions,
    entry: new URL("../agents/agent_run_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["agent-run"],
  },
  mcp: {
    role: "relay",
    permissions: relayPermissions,
    entry: new URL("../mcp/relay_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["mcp"],
  },
  "app-host": {
    role: "app-host",
    permissions: appHostPermissions,
    entry: new URL("../apps/app_host.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["app-host"],
  },
  guest: {
    role: "guest",
    permissions: guestPermissions,
    entry: new URL("../guest/guest_main.ts", import.meta.url),
    stopsOnSignal: true,
    commands: ["guest"],
  },
  approvals: {
    role: "cli",
    permissions: cliPermissions,
    entry: new URL("../owner/approvals_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["approvals", "approve", "refuse"],
  },
  task: {
    role: "cli",
    permissions: cliPermissions,
    entry: new URL("../owner/task_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["task", "usage"],
  },
  "task watch": {
    role: "cli",
    permissions: cliPermissions,
    entry: new URL("../owner/watch_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["task"],
  },
  tools: {
    role: "cli",
    permissions: cliPermissions,
    entry: new URL("../owner/tools_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["tools"],
  },
  vault: {
    role: "cli",
    permissions: cliPermissions,
    entry: new URL("../owner/vault_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["vault"],
  },
  app: {
    role: "cli",
    permissions: cliPermissions,
    entry: new URL("../owner/app_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["app"],
  },
  grants: {
    role: "cli",
    permissions: cliPermissions,
    entry: new URL("../owner/grants_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["grants"],
  },
  audit: {
    role: "cli",
    permissions: cliPermissions,
    entry: new URL("../owner/audit_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["audit"],
  },
  config: {
    role: "cli",
    permissions: cliPermissions,
    entry: new URL("../owner/config_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["config"],
  },
  portal: {
    role: "cli",
    permissions: portalLinkPermissions,
    entry: new URL("../owner/portal_main.ts", import.meta.url),
    stopsOnSignal: false,
    commands: ["portal"],
  },
  "portal-serve": {
    role: "portal",
    permissions: portalPermissions,
    entry: new URL("../portal/portal_main.ts", import.meta.url),
    stopsOnSignal: true,
    commands: ["portal-serve"],
  },
  "model-stand-in": {
    role: "stand-in",
    permissions: standInPermissions,
    entry: new URL("../stand-in/stand_in_main.ts", import.meta.url),
    stopsOnSignal: true,
    commands: ["dev"],
  },
  "egress-tunnel": {
    role: "egress-client",
    permissions: egressClientPermissions,
    entry: new URL("../egress-tunnel/client_main.ts", import.meta.url),
    stopsOnSignal: true,
    commands: ["egress-tunnel"],
  },
};

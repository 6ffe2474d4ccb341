/** `gurt guest`: runs the guest daemon (exec and files on one port, host on another). */
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
// The defaults only, from exec-guest's light entry, which imports nothing at run time: its mod.ts
// loads the guest's whole Hono graph, which every other command would then load too (program.ts).
// tests/policy/boundary_test.ts lists the light entries.
import { GUEST_DEFAULTS } from "../exec-guest/settings.ts";
// Likewise the desktop's defaults, from cua's light entry.
import { CDP_PORT, DISPLAY_DEFAULTS } from "../cua/options.ts";
import { launchRole, ROLE_TABLE } from "../roles/mod.ts";
import type { GuestArgs } from "../guest/mod.ts";
import { exitWith, loadModule } from "./run.ts";

/** The module the guest's action loads when it runs (run.ts's loadModule says why). */
type Guest = typeof import("../guest/mod.ts");

interface GuestOptions {
  workspace: string;
  execPort: number;
  hostPort: number;
  bind: string;
  desktop?: boolean;
}

/** Registers `gurt guest`. */
export function registerGuestCommand(program: Command): void {
  program
    .command("guest")
    .description(
      "run the guest daemon: exec and files on --exec-port, ready and info on --host-port",
    )
    .option("--workspace <dir>", "the workspace jail", GUEST_DEFAULTS.workspace)
    .option("--exec-port <port>", "the exec service's port (0: any)", port, GUEST_DEFAULTS.execPort)
    .option("--host-port <port>", "the host service's port (0: any)", port, GUEST_DEFAULTS.hostPort)
    .option("--bind <address>", "the address both services listen on", GUEST_DEFAULTS.bind)
    .option(
      "--desktop",
      "also run the X desktop (Xvfb, openbox, Chromium, VNC) and serve computer use on the host port",
    )
    .addHelpText("after", environmentHelp())
    .action((options: GuestOptions) =>
      exitWith(async () => {
        const { desktopOptionsFromEnv, guardGuest, GuestSettingsError, installSessionHelper } =
          await loadModule<Guest>(new URL("../guest/mod.ts", import.meta.url));
        const workspace = realWorkspace(options.workspace);
        // First of all, before any program starts: the tokens are read once and hidden from every
        // exec (mod/guest/self_guard.ts); the role is given them, and never reads a token file.
        let guarded;
        try {
          guarded = guardGuest(Deno.env.toObject());
        } catch (error) {
          if (!(error instanceof GuestSettingsError)) throw error;
          console.error(`gurt guest: ${error.message}`);
          return 1;
        }
        for (const warning of guarded.warnings) console.error(warning);
        const env = guarded.env;
        const desktop = options.desktop === true
          ? desktopOptionsFromEnv(env, { workspace, home: env.HOME ?? workspace })
          : null;
        // Written here, where writing outside the workspace is allowed; the role only runs it.
        const helper = await installSessionHelper();
        const args: GuestArgs = {
          workspace,
          bind: options.bind,
          execPort: options.execPort,
          hostPort: options.hostPort,
          desktop,
          sessionHelper: helper?.path ?? null,
          filesHelper: helper?.files ?? null,
          secrets: guarded.secrets,
        };
        const places = {
          workspace,
          bind: options.bind,
          ports: [options.execPort, options.hostPort],
          tokenFiles: [],
          desktop,
        };
        try {
          return await launchRole(ROLE_TABLE.guest, { places, args });
        } finally {
          await helper?.remove();
        }
      })
    );
}

/** The BOX_* settings the guest reads at start, each with its default, for --help. */
function environmentHelp(): string {
  const d = GUEST_DEFAULTS;
  const rows: [string, string][] = [
    ["BOX_TOKEN", "required: the bearer token of every route but GET /v1/health"],
    ["BOX_TOKEN_FILE", "a file (or /dev/fd/N) holding the token, instead of BOX_TOKEN"],
    ["BOX_HOST_TOKEN", "the host service's token (default: BOX_TOKEN)"],
    ["BOX_HOST_TOKEN_FILE", "a file (or /dev/fd/N) holding it, instead of BOX_HOST_TOKEN"],
    [
      "BOX_DEFAULT_TIMEOUT_MS",
      `an exec's time limit when it gives none (default: ${d.defaultTimeoutMs})`,
    ],
    ["BOX_MAX_TIMEOUT_MS", `the longest time limit an exec may ask (default: ${d.maxTimeoutMs})`],
    [
      "BOX_EXEC_KILL_GRACE_MS",
      `from SIGTERM to SIGKILL when an exec is stopped (default: ${d.killGraceMs})`,
    ],
    [
      "BOX_MAX_CONCURRENT_EXECS",
      `execs at once; more answer 429 busy (default: ${d.maxConcurrentExecs})`,
    ],
    [
      "BOX_MAX_OUTPUT_BYTES",
      `stdout and stderr kept per exec, each (default: ${d.maxOutputBytes})`,
    ],
    [
      "BOX_EXEC_RETENTION_MS",
      `how long a finished exec stays readable (default: ${d.execRetentionMs})`,
    ],
    [
      "BOX_MAX_FILE_BYTES",
      `the largest file written, or read but raw (default: ${d.maxFileBytes})`,
    ],
    ["BOX_MAX_DIR_ENTRIES", `entries listed per folder (default: ${d.maxDirEntries})`],
    ["BOX_CORS_ORIGINS", "exact origins a browser may call from, comma-separated (default: none)"],
    ["BOX_DESKTOP_REQUIRED", "1: /v1/ready waits for the X display too (default: 0)"],
    ["BOX_ID", `the box's name in /v1/info (default: ${d.boxId})`],
    ["BOX_EGRESS_TUNNEL", "1: the laptop egress tunnel, docs/egress-tunnel.md (default: 0)"],
    ["BOX_EGRESS_TOKEN", "the token gurt egress-tunnel presents (default: the host token)"],
    ["BOX_EGRESS_WS", "the tunnel's WebSocket listener (default: 127.0.0.1:8790)"],
    ["BOX_EGRESS_PROXY", "the proxy Chromium is started with (default: 127.0.0.1:8791)"],
  ];
  const desktop: [string, string][] = [
    ["BOX_DISPLAY", `the X display (default: ${DISPLAY_DEFAULTS.display})`],
    ["BOX_DISPLAY_GEOM", `its WIDTHxHEIGHTxDEPTH (default: ${DISPLAY_DEFAULTS.geometry})`],
    ["BOX_CDP_PORT", `Chromium's DevTools port on 127.0.0.1 (default: ${CDP_PORT})`],
    ["BOX_CHROME_PROFILE", "Chromium's profile folder (default: ~/chrome-profile)"],
    ["BOX_CUA", "0 turns computer use off: /v1/cua answers 503 (default: 1)"],
    ["BOX_VNC_PASSWORD", "starts VNC and noVNC on 6080 with it (default: none, no VNC)"],
    [
      "BOX_VNC_PASSWORD_FILE",
      "a file (or /dev/fd/N) whose first line is it, instead of BOX_VNC_PASSWORD",
    ],
  ];
  const table = (list: [string, string][]) =>
    list.map(([name, text]) => `  ${name.padEnd(26)}${text}`).join("\n");
  return `\nEnvironment (read at start; times in ms, sizes in bytes):\n${table(rows)}\n` +
    `\nWith --desktop (two guests on one machine each need their own display, DevTools port and profile):\n${
      table(desktop)
    }\n`;
}

function port(value: string): number {
  if (!/^[0-9]{1,5}$/.test(value) || Number(value) > 65535) {
    throw new InvalidArgumentError("a port is a whole number from 0 to 65535.");
  }
  return Number(value);
}

function realWorkspace(path: string): string {
  try {
    const real = Deno.realPathSync(path);
    if (!Deno.statSync(real).isDirectory) throw new Error("not a directory");
    return real;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(
      `the workspace ${path} is not a directory the guest can use (${why}); ` +
        "see runbook.md#guest-workspace-missing",
    );
  }
}

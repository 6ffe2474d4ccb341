/** `gurt guest`: runs the guest daemon (exec and files on one port, host on another). */
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
// The defaults only, from the one module of exec-guest that imports nothing at run time: its mod.ts
// loads the guest's whole Hono graph, which every other command would then load too (program.ts).
import { GUEST_DEFAULTS } from "../exec-guest/settings.ts";
import { runRole } from "../roles/mod.ts";
import type { RolePermissions } from "../roles/mod.ts";
import { exitWith, loadModule } from "./run.ts";

/** The modules the guest's action loads when it runs (run.ts's loadModule says why). */
type Cua = typeof import("../cua/mod.ts");
type ExecGuest = typeof import("../exec-guest/mod.ts");

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
    .action((options: GuestOptions) =>
      exitWith(async () => {
        const { desktopOptionsFromEnv, desktopPermissionNeeds } = await loadModule<Cua>(
          new URL("../cua/mod.ts", import.meta.url),
        );
        const { guestEntry, guestPermissions, installSessionHelper, tokenFilesIn } =
          await loadModule<
            ExecGuest
          >(
            new URL("../exec-guest/mod.ts", import.meta.url),
          );
        const workspace = realWorkspace(options.workspace);
        const env = Deno.env.toObject();
        const desktop = options.desktop === true
          ? desktopOptionsFromEnv(env, { workspace, home: env.HOME ?? workspace })
          : null;
        // Written here, where writing outside the workspace is allowed; the role only runs it.
        const helper = await installSessionHelper();
        const args = {
          workspace,
          bind: options.bind,
          execPort: options.execPort,
          hostPort: options.hostPort,
          desktop,
          sessionHelper: helper?.path ?? null,
          filesHelper: helper?.files ?? null,
        };
        let permissions = guestPermissions({
          workspace,
          bind: options.bind,
          ports: [options.execPort, options.hostPort],
          tokenFiles: tokenFilesIn(env),
        });
        if (desktop !== null) {
          permissions = withDesktop(permissions, desktopPermissionNeeds(desktop));
        }
        // The guest role stops gracefully on SIGTERM and SIGINT (its Worker listens for them).
        // A listener here too keeps Deno from ending the whole process on the signal before
        // the Worker's listener has run, which it sometimes does under load.
        const keep = () => {};
        for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, keep);
        try {
          return await runRole({ role: "guest", permissions, entry: guestEntry, args });
        } finally {
          await helper?.remove();
        }
      })
    );
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

/** The guest's permissions plus what the desktop adds (mod/cua/permissions.ts). */
function withDesktop(
  base: RolePermissions,
  needs: ReturnType<Cua["desktopPermissionNeeds"]>,
): RolePermissions {
  const list = (value: string[] | boolean | false): string[] => Array.isArray(value) ? value : [];
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

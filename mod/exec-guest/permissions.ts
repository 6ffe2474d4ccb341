/**
 * The guest's permissions (`gurt guest`, seed 004's box-exec and box-host): the workspace jail,
 * its token files, the X display, and its two ports. It may not read the box home. It runs
 * programs for /v1/exec, so `run` is whole: the sandbox around the guest is what bounds them.
 */
import type { RolePermissions } from "../roles/mod.ts";
import { codeDir } from "../roles/mod.ts";

/** What the guest's permissions are computed from. */
export interface GuestPlaces {
  workspace: string;
  bind: string;
  ports: number[];
  /** BOX_TOKEN_FILE and BOX_HOST_TOKEN_FILE, where set. */
  tokenFiles: string[];
}

/** The permissions of `gurt guest`. */
export function guestPermissions(places: GuestPlaces): RolePermissions {
  return {
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
}

/** An address as Deno's net permissions spell it: IPv6 in brackets. */
function host(bind: string): string {
  return bind.includes(":") && !bind.startsWith("[") ? `[${bind}]` : bind;
}

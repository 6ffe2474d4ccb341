/**
 * The permissions of the two roles that only listen on a loopback port: the owner's portal and the
 * model stand-in. Split from table.ts, which names them.
 */
import { codeDir } from "../config/code_dir.ts";
import { adminSocketPath, ownerTokenPath } from "../config/home_paths.ts";
import { parseListenAddress } from "../config/listen_address.ts";
import type { RolePermissions } from "./types.ts";

/** What the portal's permissions are computed from. */
export interface PortalPlaces {
  home: string;
  /** `[portal] listen`, `host:port` on loopback. */
  listen: string;
}

/** Where the model stand-in (`gurt dev model-stand-in`) listens. */
export interface StandInPlaces {
  /** 127.0.0.1, ::1 or localhost. */
  hostname: string;
  port: number;
}

/**
 * The owner's portal (`gurt portal-serve`, started and watched by `gurt serve`): the owner's pages
 * and API on its loopback port, every read and every act through the admin socket. It reads the
 * owner token and nothing else of the box home: no vault, no audit log, no grants. It writes
 * nothing (connecting to a Unix socket is a write to its path in Deno), runs no program, and
 * reaches no network but its own listener and the admin socket.
 */
export function portalPermissions(places: PortalPlaces): RolePermissions {
  const admin = adminSocketPath(places.home);
  const listen = parseListenAddress(places.listen);
  if ("problem" in listen) {
    throw new Error(
      `[portal] listen = ${JSON.stringify(places.listen)} ${listen.problem}; ` +
        "see runbook.md#config-invalid",
    );
  }
  return {
    read: [codeDir(), ownerTokenPath(places.home), admin],
    write: [admin],
    net: [`${host(listen.hostname)}:${listen.port}`, `unix:${admin}`],
    env: false,
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}

/**
 * The model stand-in (`gurt dev model-stand-in`, for trying gurt offline): it answers model
 * requests on its loopback port from a script, and reaches nothing else: no box home, no vault,
 * no other host, no program.
 */
export function standInPermissions(places: StandInPlaces): RolePermissions {
  return {
    read: [codeDir()],
    write: false,
    net: [`${host(places.hostname)}:${places.port}`],
    env: false,
    run: false,
    sys: false,
    ffi: false,
    import: false,
  };
}

/** An address as Deno's net permissions spell it: IPv6 in brackets. */
export function host(bind: string): string {
  return bind.includes(":") && !bind.startsWith("[") ? `[${bind}]` : bind;
}

/**
 * The owner CLI's permissions (seed 002's bxctl): it reads the audit log, the grants and
 * gurt.toml, and talks to the admin socket. It writes nothing.
 */
import { adminSocketPath, type Config } from "../config/mod.ts";
import type { RolePermissions } from "../roles/mod.ts";
import { codeDir } from "../roles/mod.ts";

/** The permissions of every `gurt` owner command. */
export function cliPermissions(config: Config): RolePermissions {
  const admin = adminSocketPath(config.home);
  return {
    read: [codeDir(), config.file, `${config.home}/audit`, `${config.home}/grants`, admin],
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

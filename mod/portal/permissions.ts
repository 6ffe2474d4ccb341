/**
 * The permissions of `gurt portal` (an owner command in the CLI role): it reads the owner token
 * and the portal's address file, and prints a link. It writes nothing and reaches no network.
 */
import { type Config, ownerTokenPath, portalAddrPath } from "../config/mod.ts";
import type { RolePermissions } from "../roles/mod.ts";
import { codeDir } from "../roles/mod.ts";

/** The permissions of `gurt portal`. */
export function portalLinkPermissions(config: Config): RolePermissions {
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

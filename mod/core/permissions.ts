/**
 * The core's permissions (`gurt serve`): it owns the box home and the vault. It starts workers and
 * the sandbox, so it may run programs, and it fetches for http_fetch, so it may reach the network.
 * It may not load native code.
 */
import type { Config } from "../config/mod.ts";
import type { RolePermissions } from "../roles/mod.ts";
import { codeDir } from "../roles/mod.ts";
import { SYSTEM_PATHS } from "../runtime/mod.ts";

/** The permissions of `gurt serve`. */
export function corePermissions(config: Config): RolePermissions {
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

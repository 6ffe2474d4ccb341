/**
 * Which of the host's system paths the sandbox sees, and how: a directory or file mounted
 * read-only, or a symlink copied as a symlink (Debian's /bin -> usr/bin). Nothing else of the host
 * is visible: not /etc as a whole (the vault may live there), not /home, not the box home.
 */
import type { SystemEntry, SystemLayout } from "./sandbox_args.ts";

/** The system paths a sandboxed program may need, each mounted if the host has it. */
export const SYSTEM_PATHS: readonly string[] = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc/alternatives",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/localtime",
  "/etc/nsswitch.conf",
  "/etc/passwd",
  "/etc/group",
];

/** Probes the host's system paths (or `paths`) with lstat; a path the host lacks is left out. */
export async function probeSystemLayout(
  paths: readonly string[] = SYSTEM_PATHS,
): Promise<SystemLayout> {
  const entries: SystemEntry[] = [];
  for (const path of paths) {
    let info: Deno.FileInfo;
    try {
      info = await Deno.lstat(path);
    } catch {
      continue;
    }
    if (info.isSymlink) entries.push({ path, kind: "symlink", target: await Deno.readLink(path) });
    else entries.push({ path, kind: "bind" });
  }
  return { entries };
}
